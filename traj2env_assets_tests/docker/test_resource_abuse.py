"""Code inside a sandbox cannot exhaust the host: a fork bomb, a memory hog, a disk filler
and a gigabyte of output each end bounded, and the outcome says which limit stopped them."""

from __future__ import annotations

import resource
import threading
import time
import uuid
from collections.abc import Iterator

import docker
import pytest
from docker.models.containers import Container

from traj2env_assets.docker_engine import sandbox as sandbox_module
from traj2env_assets.docker_engine.prune import leftovers
from traj2env_assets.docker_engine.sandbox import (
    OUTPUT_LIMIT_BYTES,
    OUTPUT_TAIL_CHARS,
    ContainerLimits,
    exec_with_deadline,
    sandbox,
    written_bytes,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]

IMAGE = "python:3.13-slim"
SESSION = {"traj2env.test_session": uuid.uuid4().hex}
LIMITS = ContainerLimits(memory="256m", cpus=1.0, pids=64, disk_bytes=256 * 1024**2)


@pytest.fixture(scope="module")
def client() -> Iterator[docker.DockerClient]:
    """The engine, without the shared fixture's image clean-up (nothing is built here)."""
    client = docker.from_env()
    yield client
    assert leftovers(client, SESSION) == {"containers": [], "networks": [], "volumes": []}


@pytest.fixture
def box(client: docker.DockerClient) -> Iterator[Container]:
    with sandbox(client, IMAGE, role="probe", limits=LIMITS, labels=SESSION) as container:
        yield container


def test_a_fork_bomb_hits_the_pids_limit_ends_by_the_deadline_and_is_recorded(box: Container) -> None:
    outcome = exec_with_deadline(box, ":(){ :|:& };:", timeout_s=10, disk_bytes=LIMITS.disk_bytes)
    assert outcome.stopped_by == "pids_limit"
    # The deadline, then the host watchdog's grace, bound it whatever the bomb does.
    assert outcome.seconds < 10 + 15 + 10
    assert "Resource temporarily unavailable" in outcome.output_tail


def test_a_memory_hog_is_killed_at_the_memory_limit_and_recorded(box: Container) -> None:
    outcome = exec_with_deadline(box, "python -c \"b = b'x' * (1 << 30)\"", timeout_s=60, disk_bytes=LIMITS.disk_bytes)
    assert outcome.exit_code == 137 and outcome.stopped_by == "out_of_memory"
    # The next exec that fails for another reason is not blamed on that kill.
    other = exec_with_deadline(box, "exit 3", timeout_s=10)
    assert other.exit_code == 3 and other.stopped_by is None


def test_a_disk_filler_is_stopped_at_the_disk_limit(box: Container) -> None:
    outcome = exec_with_deadline(
        box, "dd if=/dev/zero of=/tmp/fill bs=1M count=8192", timeout_s=300, disk_bytes=LIMITS.disk_bytes
    )
    assert outcome.stopped_by == "disk_limit"
    written = written_bytes(box)
    # The kernel refuses the file past the limit, however fast the disk and loaded the host.
    assert written is not None and LIMITS.disk_bytes <= written < LIMITS.disk_bytes + 16 * 1024**2


def test_a_disk_filled_with_many_files_is_stopped_by_the_watch(box: Container) -> None:
    script = "for i in $(seq 64); do dd if=/dev/zero of=/tmp/fill$i bs=1M count=128 2>/dev/null; sleep 0.5; done"
    outcome = exec_with_deadline(box, script, timeout_s=300, disk_bytes=LIMITS.disk_bytes)
    assert outcome.stopped_by == "disk_limit"
    written = written_bytes(box)
    assert written is not None and LIMITS.disk_bytes < written < 64 * 128 * 1024**2 // 2


def test_a_gigabyte_of_output_is_cut_at_the_output_limit_with_a_bounded_tail(box: Container) -> None:
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    outcome = exec_with_deadline(box, "head -c 1G /dev/zero | tr '\\0' x", timeout_s=300, disk_bytes=LIMITS.disk_bytes)
    peak_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert outcome.stopped_by == "output_limit"
    assert OUTPUT_LIMIT_BYTES < outcome.output_bytes < 1024**3
    assert outcome.output_tail == "x" * OUTPUT_TAIL_CHARS
    # ru_maxrss is in KiB: the host process did not hold the output.
    assert peak_after - peak_before < 100 * 1024


def test_an_exec_does_not_wait_for_a_slow_measurement_and_a_late_answer_stops_nothing(
    box: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The engine's size answer can take seconds (a walk of the whole filesystem on
    # fuse-overlayfs): here it takes 8 s and says the limit was passed, after the run ended.
    answered = threading.Event()

    def slow_over_the_limit(container: Container) -> int:
        time.sleep(8)
        answered.set()
        return LIMITS.disk_bytes + 1

    monkeypatch.setattr(sandbox_module, "written_bytes", slow_over_the_limit)
    started = time.monotonic()
    outcome = exec_with_deadline(box, "sleep 6", timeout_s=60, disk_bytes=LIMITS.disk_bytes)
    assert time.monotonic() - started < 6 + 4  # not 5 + 8: the measurement is not waited for
    assert outcome.exit_code == 0 and outcome.stopped_by is None
    assert answered.wait(30)
    time.sleep(1)
    box.reload()
    assert box.status == "running"
    assert exec_with_deadline(box, "true", timeout_s=10).exit_code == 0

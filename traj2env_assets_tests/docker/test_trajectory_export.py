"""The Trajectory spec export, end to end on the real engine against the fake platform.

harness.py runs as the platform runs ``run_command`` (a process with the session key
and base URL in its environment), from the exported build context with its copied
modules, against a real Docker task (the bundled Python repair sample). The model is
scripted behind the fake platform's chat endpoint, the HTTP boundary the SDK calls.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from trajectory import Client

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.labels import project_labels
from traj2env_assets.families.registry import registered_families
from traj2env_assets.harbor.dataset import write_dataset
from traj2env_assets.harbor.writer import WrittenTask
from traj2env_assets.trajectory_export.export import ExportSummary, export_spec
from traj2env_assets.trajectory_export.layout import BENCHMARK_DIR, HARNESS_FILE, TASKS_ARCHIVE
from traj2env_assets.trajectory_export.push import push_spec
from traj2env_assets.trajectory_export.wheelhouse import download_wheelhouse
from traj2env_assets_tests.trajectory_export.fake_trajectory_platform import (
    API_KEY,
    FakeTrajectoryPlatform,
    final_reply,
    running_platform,
    tool_call_reply,
)

pytestmark = pytest.mark.docker

TASK = "calc-fix"
FIX = "sed -i 's/return a - b/return a + b/' calc.py"


@pytest.fixture(scope="module")
def exported(
    tmp_path_factory: pytest.TempPathFactory, engine: DockerEngine, python_written: WrittenTask
) -> Iterator[ExportSummary]:
    dataset = tmp_path_factory.mktemp("trajectory-tasks")
    shutil.copytree(python_written.path, dataset / TASK)
    write_dataset(dataset)
    wheelhouse = download_wheelhouse(tmp_path_factory.mktemp("wheelhouse") / "wheels")
    out = tmp_path_factory.mktemp("spec")
    yield export_spec(dataset, out, registered_families(), wheelhouse=wheelhouse, docker_client=engine.client)
    # The task image the harness built (in a platform sandbox it goes with the sandbox).
    for image in engine.client.images.list(name=f"traj2env-harness/{TASK}"):
        engine.client.images.remove(image.id, force=True)


@pytest.fixture(scope="module")
def tasks_dir(exported: ExportSummary, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The archive unpacked as the Dockerfile's RUN step does."""
    target = tmp_path_factory.mktemp("tasks")
    with tarfile.open(exported.spec_dir / BENCHMARK_DIR / TASKS_ARCHIVE) as archive:
        archive.extractall(target, filter="data")
    return target


def _run_harness(
    spec_dir: Path, tasks: Path, replies: list[dict[str, Any]], **env: str
) -> tuple[FakeTrajectoryPlatform, dict[str, Any]]:
    with running_platform(replies) as platform:
        environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        environment.update(TRAJECTORY_API_KEY=API_KEY, TRAJECTORY_BASE_URL=platform.base_url, **env)
        completed = subprocess.run(
            [sys.executable, str(spec_dir / BENCHMARK_DIR / HARNESS_FILE), "--task", TASK, "--tasks-dir", str(tasks)],
            capture_output=True,
            text=True,
            timeout=600,
            env=environment,
            check=False,
        )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return platform, json.loads(completed.stdout.strip().splitlines()[-1])


def _evidence(platform: FakeTrajectoryPlatform) -> dict[str, bytes]:
    """Artifact name → uploaded bytes, through the evidence event's artifact ids."""
    (event,) = platform.trajectory.events
    blobs = {path.rsplit("/", 1)[-1]: raw for path, raw in platform.blobs.items()}
    return {name: blobs[artifact_id] for name, artifact_id in event["payload"]["artifacts"].items()}


def _assert_order(platform: FakeTrajectoryPlatform) -> None:
    paths = [p for p in platform.paths() if not p.startswith("PUT /_blob/")]
    assert paths[0] == "POST /api/v1/trajectories"
    assert paths[-1].endswith("/complete") and "/artifacts/" not in paths[-1]
    last_artifact = max(i for i, p in enumerate(paths) if "/artifacts" in p)
    assert last_artifact < next(i for i, p in enumerate(paths) if p.endswith("/events"))
    assert all(r.status == 200 for r in platform.requests)


def test_harness_solving_model_scores_one(exported: ExportSummary, tasks_dir: Path) -> None:
    platform, result = _run_harness(exported.spec_dir, tasks_dir, [tool_call_reply(FIX), final_reply()])
    record = platform.trajectory
    assert (result["ending"], result["reward"]) == ("ENV_DONE", 1.0)
    assert record.termination_reason == "ENV_DONE"
    assert [(r["name"], r["value"], r["min_value"], r["max_value"]) for r in record.rewards] == [("reward", 1.0, 0, 1)]
    first = record.chat_requests[0]
    assert "calc.py" in first["messages"][1]["content"] and first["tools"][0]["function"]["name"] == "shell"
    assert record.chat_requests[1]["messages"][-1]["content"].startswith("exit code: 0")
    evidence = _evidence(platform)
    assert evidence["verifier/reward.txt"].strip() == b"1"
    assert FIX in evidence["transcript.json"].decode()
    _assert_order(platform)


def test_harness_non_solving_model_scores_zero_and_cannot_see_tests(exported: ExportSummary, tasks_dir: Path) -> None:
    replies = [tool_call_reply("ls /tests /app/tasks 2>&1; cat calc.py"), final_reply("I could not fix it.")]
    platform, result = _run_harness(exported.spec_dir, tasks_dir, replies)
    assert (result["ending"], result["reward"]) == ("ENV_DONE", 0.0)
    assert [r["value"] for r in platform.trajectory.rewards] == [0.0]
    tool_output = platform.trajectory.chat_requests[1]["messages"][-1]["content"]
    assert tool_output.count("No such file or directory") == 2 and "return a - b" in tool_output
    _assert_order(platform)


def test_harness_verifier_crash_is_error_without_reward(
    exported: ExportSummary, tasks_dir: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "tasks"
    shutil.copytree(tasks_dir, broken)
    (broken / TASK / "tests" / "test.sh").write_text("#!/bin/bash\necho verifier exploded >&2\nexit 3\n")
    platform, result = _run_harness(exported.spec_dir, broken, [tool_call_reply(FIX), final_reply()])
    assert (result["ending"], result["reward"]) == ("ERROR", None)
    assert platform.trajectory.termination_reason == "ERROR"
    assert platform.trajectory.rewards == []
    evidence = _evidence(platform)
    assert b"no valid grade" in evidence["error.txt"] and b"exit code 3" in evidence["error.txt"]
    assert not any("/rewards" in p for p in platform.paths())


def test_harness_verifier_crashing_after_its_leading_zero_is_error_not_a_graded_zero(
    exported: ExportSummary, tasks_dir: Path, tmp_path: Path
) -> None:
    """The task's own test.sh writes 0 to reward.txt first; a crash after that line (the
    process killed, or the verdict step dying while the script still exits 0) is no grade."""
    original = (tasks_dir / TASK / "tests" / "test.sh").read_text()
    leading_zero = 'echo 0 > "$LOGS/reward.txt"\n'
    assert leading_zero in original
    crashes = {
        "killed": leading_zero + "kill -9 $$\n",
        "verdict died": leading_zero + "python3 -c 'raise SystemExit(\"verdict crashed\")'\nexit 0\n",
    }
    for name, crash in crashes.items():
        broken = tmp_path / name.replace(" ", "-")
        shutil.copytree(tasks_dir, broken)
        (broken / TASK / "tests" / "test.sh").write_text(original.replace(leading_zero, crash, 1))
        platform, result = _run_harness(exported.spec_dir, broken, [tool_call_reply(FIX), final_reply()])
        assert (result["ending"], result["reward"]) == ("ERROR", None), name
        assert platform.trajectory.termination_reason == "ERROR" and platform.trajectory.rewards == []
        evidence = _evidence(platform)
        assert evidence["verifier/reward.txt"].strip() == b"0"  # the leading 0 was there
        assert b"no valid grade" in evidence["error.txt"]
        assert (b"exit code 137" if name == "killed" else b"no verdict.json") in evidence["error.txt"]


def test_harness_endings_truncation_max_steps_timeout_and_model_failure(
    exported: ExportSummary, tasks_dir: Path
) -> None:
    cut_off = tool_call_reply(FIX)
    cut_off["finish_reason"] = "length"
    truncated, result = _run_harness(exported.spec_dir, tasks_dir, [cut_off])
    # The cut-off reply's tool call is not run: the bug stays, graded 0.
    assert (result["ending"], result["reward"]) == ("TRUNCATION", 0.0)
    assert truncated.trajectory.termination_reason == "TRUNCATION"
    _, result = _run_harness(exported.spec_dir, tasks_dir, [tool_call_reply(FIX)], MAX_TURNS="1")
    assert (result["ending"], result["reward"]) == ("MAX_STEPS", 1.0)
    slow, result = _run_harness(
        exported.spec_dir, tasks_dir, [tool_call_reply(f"{FIX}; sleep 30"), final_reply()], AGENT_TIMEOUT_SEC="3"
    )
    # The command is stopped at the agent's deadline; the work so far is graded in full.
    assert (result["ending"], slow.trajectory.termination_reason) == ("TIMEOUT", "TIMEOUT")
    assert result["reward"] == 1.0 and len(slow.trajectory.chat_requests) == 1
    failed, result = _run_harness(exported.spec_dir, tasks_dir, [{"error_status": 500}])
    assert (result["ending"], failed.trajectory.rewards) == ("ERROR", [])
    assert b"model call failed" in _evidence(failed)["error.txt"]


def test_push_uploads_the_context_and_one_task_per_dataset_task(exported: ExportSummary) -> None:
    benchmark = exported.spec_dir / BENCHMARK_DIR
    with running_platform() as platform:
        client = Client(api_key=API_KEY, base_url=platform.base_url, max_retries=0)
        uploaded = push_spec(client, exported.spec_dir, agent_name="traj2env-test", build_images=False)
    (op,) = platform.ingestions
    files = platform.uploaded_files(op)
    expected = {p.relative_to(benchmark).as_posix() for p in benchmark.rglob("*") if p.is_file()}
    assert set(files) == expected and len(files) == exported.context_files < 4096
    assert {"Dockerfile", "harness.py", "tasks.json", "tasks.tar.gz"} <= set(files)
    assert not any(name.startswith("tasks/") for name in files)  # the tasks travel archived
    assert files["harness.py"] == (benchmark / "harness.py").read_bytes()
    (task,) = platform.uploaded_tasks(op)
    assert task["name"] == TASK and task["split"] == "train"  # one source: round(0.15 * 1) = 0 in test
    assert task["run_command"] == f"python3 /app/harness.py --task {TASK}"
    assert (
        task["env_resources"]["docker_engine"] is True and task["runtime"]["source"]["dockerfile_path"] == "Dockerfile"
    )
    assert task["env_vars"] == {"AGENT_TIMEOUT_SEC": "120", "VERIFIER_TIMEOUT_SEC": "180", "MAX_TURNS": "50"}
    assert uploaded.task_count == 1 and platform.ingestions[op]["session"]["agent_name"] == "traj2env-test"


@pytest.fixture(scope="module")
def harness_image(exported: ExportSummary, engine: DockerEngine) -> Iterator[str]:
    """The spec's Dockerfile built as the platform would (its RUN steps check the engine
    tools, the offline wheels and ``harness.py --self-check``)."""
    image, _ = engine.client.images.build(
        path=str(exported.spec_dir / BENCHMARK_DIR),
        tag="traj2env-harness-image-test:latest",
        rm=True,
        forcerm=True,
        labels=project_labels("task-image"),
    )
    yield image.id
    engine.client.images.remove(image.id, force=True)


@pytest.mark.slow
def test_harness_image_builds_with_its_checks(harness_image: str, engine: DockerEngine) -> None:
    output = engine.client.containers.run(
        harness_image, ["python3", "/app/harness.py", "--self-check"], remove=True, network_mode="none"
    )
    assert output.decode().strip() == "ok: 1 tasks"
    listing = engine.client.containers.run(
        harness_image,
        ["sh", "-c", "ls /app /app/tasks/calc-fix; command -v dockerd docker"],
        remove=True,
        network_mode="none",
    ).decode()
    assert "solution" not in listing and "tasks.tar.gz" not in listing and "/usr/sbin/dockerd" in listing
    compose = engine.client.containers.run(
        harness_image, ["docker", "compose", "version"], remove=True, network_mode="none"
    ).decode()
    assert "Docker Compose version" in compose


@pytest.mark.slow
def test_harness_runs_inside_its_image(harness_image: str, engine: DockerEngine) -> None:
    """The platform's run_command in the built image; the engine here is the host's (its
    socket mounted) instead of the sandbox's own dockerd, and the fake platform is reached
    over the host network."""
    with running_platform([tool_call_reply(FIX), final_reply()]) as platform:
        output = engine.client.containers.run(
            harness_image,
            ["python3", "/app/harness.py", "--task", TASK],
            remove=True,
            network_mode="host",
            environment={"TRAJECTORY_API_KEY": API_KEY, "TRAJECTORY_BASE_URL": platform.base_url},
            volumes={"/var/run/docker.sock": {"bind": "/var/run/docker.sock", "mode": "rw"}},
        )
    assert json.loads(output.decode().strip().splitlines()[-1])["reward"] == 1.0
    assert platform.trajectory.termination_reason == "ENV_DONE"
    assert [r["value"] for r in platform.trajectory.rewards] == [1.0]

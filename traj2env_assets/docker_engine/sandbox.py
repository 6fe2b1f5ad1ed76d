"""A labelled, network-less, resource-capped container and the few things done to it.

Every container is started from an image with ``sleep <work_s + DEADLINE_GRACE_S>`` as
its only process, so it exits by itself at its deadline (labelled ``traj2env.deadline``)
even if the process that started it is killed; work happens through ``exec`` under a
wall-clock deadline (``timeout`` inside the container, and a host-side watchdog that
kills the container if even that hangs). :func:`sandbox` always removes the container:
on success, on error and on interrupt.

Bounded whatever the code inside does: memory (``memory``, no swap), processes
(``pids``; an OOM kill or a refused fork is recorded), CPU, output (streamed, only a tail kept; past
``OUTPUT_LIMIT_BYTES`` the container is killed) and disk (the container's writable
layer is measured while an exec runs; past ``disk_bytes`` the container is killed:
this engine's storage driver takes no size option. The poll is seconds late against a
writer at disk speed, so the kernel also refuses any single file past ``disk_bytes``:
the ``fsize`` rlimit). :class:`ExecOutcome` says which limit stopped the run.

The writable layer's size is the engine's costliest answer: drivers without a cheap diff
size (fuse-overlayfs, vfs) walk the container's whole filesystem for it, about 5 s of the
engine's time on a loaded 2-core host. So an exec never waits for a measurement to end
(one still running when the command exits is abandoned, and a late answer stops nothing),
and the watch pauses between measurements in proportion to what the last one cost.
"""

from __future__ import annotations

import contextlib
import io
import math
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, Literal

import docker
from docker.errors import APIError, NotFound
from docker.models.containers import Container
from docker.types import Ulimit
from pydantic import BaseModel, Field

from traj2env_assets.docker_engine.labels import DEADLINE_LABEL, Role, project_labels

OUTPUT_TAIL_CHARS = 4000
OUTPUT_LIMIT_BYTES = 64 * 1024 * 1024
# Grace between the in-container `timeout` and the host watchdog.
_WATCHDOG_GRACE_S = 15
# The first measurement of the writable layer comes this long into an exec: most execs
# (a verifier's run, a control) end sooner and cost the engine none. Worst case, a writer
# is seen this long plus one measurement after it started.
_DISK_FIRST_LOOK_S = 5.0
# Then the watch waits this many times the last measurement's cost (at least
# _DISK_POLL_S): the engine spends at most a third of one thread on it per running exec.
_DISK_POLL_S = 2.0
_DISK_POLL_COST_FACTOR = 2.0
# A process killed by SIGXFSZ (25): it wrote past the fsize rlimit.
_FILE_SIZE_EXCEEDED = 128 + 25
# A container outlives the work it was started for by this much (copies in and out,
# the watchdog's grace), then its only process exits.
DEADLINE_GRACE_S = 300
# For callers that do not say how long their work takes (the attack suite's plain runs).
DEFAULT_WORK_S = 3600.0
# The kernel's counts, in the container's own cgroups (v1 paths, then v2), of OOM kills
# and of forks refused at the pids limit, as "out_of_memory N" and "pids_limit N" lines.
# Shell builtins only: a container at its pids limit has no process to spare for sed.
_LIMIT_HITS_SCRIPT = (
    "for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events"
    " /sys/fs/cgroup/pids/pids.events /sys/fs/cgroup/pids.events; do"
    " [ -r $f ] || continue; while read k v; do case $f:$k in"
    " *memory*:oom_kill) echo out_of_memory $v;; *pids*:max) echo pids_limit $v;; esac; done < $f; done"
)

StopReason = Literal["timeout", "output_limit", "disk_limit", "out_of_memory", "pids_limit"]


class ContainerLimits(BaseModel):
    memory: str = "4g"
    cpus: float = Field(default=1.0, gt=0)
    pids: int = Field(default=512, ge=16)
    disk_bytes: int = Field(default=2 * 1024**3, ge=64 * 1024**2)
    """The most a container may write to its own filesystem."""


class TrialSettings(BaseModel):
    """What the engine's options make of a trial's two containers (agent and verifier)."""

    limits: ContainerLimits = Field(default_factory=ContainerLimits)
    # Extra labels on every container, e.g. to tell one test session's containers apart.
    labels: dict[str, str] = Field(default_factory=dict)
    agent_timeout_s: float = 600
    verifier_timeout_s: float = 600


class ExecOutcome(BaseModel):
    exit_code: int | None
    timed_out: bool
    output_tail: str
    seconds: float
    output_bytes: int = 0
    stopped_by: StopReason | None = None
    """The limit that ended the run or that it ran into (None: no limit was reached)."""


@contextmanager
def sandbox(
    client: docker.DockerClient,
    image: str,
    *,
    role: Role,
    limits: ContainerLimits,
    labels: Mapping[str, str] | None = None,
    work_s: float = DEFAULT_WORK_S,
) -> Iterator[Container]:
    container = start_container(client, image, role=role, limits=limits, labels=labels, work_s=work_s)
    try:
        yield container
    finally:
        remove_quietly(container)


def start_container(
    client: docker.DockerClient,
    image: str,
    *,
    role: Role,
    limits: ContainerLimits,
    labels: Mapping[str, str] | None = None,
    work_s: float = DEFAULT_WORK_S,
) -> Container:
    """A running sandbox container for ``work_s`` seconds of work; the caller removes it
    (:func:`sandbox` does), and it exits by itself ``DEADLINE_GRACE_S`` after that."""
    lifetime = math.ceil(work_s) + DEADLINE_GRACE_S
    return client.containers.run(
        image,
        entrypoint=["sleep", str(lifetime)],
        detach=True,
        init=True,
        network_mode="none",
        mem_limit=limits.memory,
        memswap_limit=limits.memory,
        pids_limit=limits.pids,
        nano_cpus=int(limits.cpus * 1e9),
        ulimits=[Ulimit(name="fsize", soft=limits.disk_bytes, hard=limits.disk_bytes)],
        labels={**project_labels(role), **(labels or {}), DEADLINE_LABEL: str(math.ceil(time.time()) + lifetime)},
    )


def remove_quietly(container: Container) -> None:
    _limit_hits_seen.pop(container.id, None)
    try:
        container.remove(force=True)
    except NotFound:
        pass
    except APIError as exc:
        # Removal already in progress (another thread or the interrupt handler).
        if exc.status_code != 409:
            raise


class _Limiter:
    """Kills the container when a limit is passed and remembers which one (first wins)."""

    def __init__(self, container: Container) -> None:
        self.container = container
        self.stopped_by: StopReason | None = None
        self._lock = threading.Lock()

    def stop(self, reason: StopReason, *, unless: threading.Event | None = None) -> None:
        with self._lock:
            # A watch that answers after the run ended stops nothing (the container may be
            # in the caller's next step).
            if unless is not None and unless.is_set():
                return
            if self.stopped_by is None:
                self.stopped_by = reason
        kill_quietly(self.container)

    def finish(self, done: threading.Event) -> None:
        with self._lock:
            done.set()

    def watch_disk(self, limit: int, done: threading.Event) -> None:
        pause = _DISK_FIRST_LOOK_S
        while not done.wait(pause):
            started = time.monotonic()
            written = written_bytes(self.container) or 0
            if written > limit:
                self.stop("disk_limit", unless=done)
                return
            pause = max(_DISK_POLL_S, _DISK_POLL_COST_FACTOR * (time.monotonic() - started))


def written_bytes(container: Container) -> int | None:
    """How much the container wrote to its own filesystem (its writable layer)."""
    try:
        [listed] = container.client.api.containers(all=True, size=True, filters={"id": container.id}) or [None]
    except (APIError, ValueError):
        return None
    return int(listed.get("SizeRw") or 0) if listed else None


def _limit_hits(container: Container) -> dict[str, int]:
    try:
        _, output = container.exec_run(["sh", "-c", _LIMIT_HITS_SCRIPT])
    except APIError:
        return {}
    hits: dict[str, int] = {}
    for line in (output or b"").decode().splitlines():
        name, _, count = line.partition(" ")
        if count.strip().isdigit():
            hits[name] = hits.get(name, 0) + int(count)
    return hits


# Limit hits already seen per container, so a later exec is not blamed for an earlier one.
_limit_hits_seen: dict[str, dict[str, int]] = {}


def _near_pids_limit(container: Container) -> bool:
    """Asked of the engine: a container at its pids limit may not even start the reader."""
    try:
        pids = container.stats(stream=False, one_shot=True).get("pids_stats") or {}
    except APIError:
        return False
    return bool(pids.get("limit")) and int(pids.get("current") or 0) >= 0.9 * int(pids["limit"])


def _limit_hit(container: Container) -> StopReason | None:
    """The memory or pids limit, if the container hit it since the previous look."""
    seen, now = _limit_hits_seen.get(container.id, {}), _limit_hits(container)
    if not now:
        return "pids_limit" if _near_pids_limit(container) else None
    _limit_hits_seen[container.id] = now
    for reason in ("out_of_memory", "pids_limit"):
        if now.get(reason, 0) > seen.get(reason, 0):
            return reason
    return None


def exec_with_deadline(
    container: Container,
    script: str,
    *,
    timeout_s: float,
    user: str = "root",
    workdir: str = "/",
    env: Mapping[str, str] | None = None,
    disk_bytes: int | None = None,
) -> ExecOutcome:
    """Run ``script`` under the deadline; its output is streamed and only a tail is kept.

    ``disk_bytes`` (the container's :attr:`ContainerLimits.disk_bytes`) turns on the disk
    watch for the length of the run.
    """
    started = time.monotonic()
    argv = ["timeout", "-k", "5", f"{timeout_s:.0f}", "bash", "-c", script]
    limiter = _Limiter(container)
    watchdog = threading.Timer(timeout_s + _WATCHDOG_GRACE_S, limiter.stop, args=("timeout",))
    done = threading.Event()
    disk_watch = (
        threading.Thread(target=limiter.watch_disk, args=(disk_bytes, done), daemon=True) if disk_bytes else None
    )
    tail = bytearray()
    total = 0
    exit_code: int | None = None
    watchdog.start()
    if disk_watch:
        disk_watch.start()
    try:
        api = container.client.api
        exec_id = api.exec_create(container.id, argv, user=user, workdir=workdir, environment=dict(env or {}))["Id"]
        for chunk in api.exec_start(exec_id, stream=True):
            total += len(chunk)
            tail += chunk
            del tail[: max(0, len(tail) - OUTPUT_TAIL_CHARS * 4)]
            if total > OUTPUT_LIMIT_BYTES:
                limiter.stop("output_limit")
                break
        exit_code = api.exec_inspect(exec_id).get("ExitCode")
    except APIError as exc:
        tail += str(exc).encode()
    finally:
        watchdog.cancel()
        # Not joined: a measurement in flight ends in its own time (see the module's notes).
        limiter.finish(done)
    seconds = time.monotonic() - started
    stopped_by = limiter.stopped_by
    timed_out = stopped_by == "timeout" or (exit_code in (124, 137, None) and seconds >= timeout_s)
    if stopped_by is None and timed_out:
        stopped_by = "timeout"
    if stopped_by is None and exit_code == _FILE_SIZE_EXCEEDED:
        stopped_by = "disk_limit"
    if stopped_by is None:
        # A limit hit that did not stop the run (a fork refused, a child OOM-killed) is
        # recorded too; one exec of ``sed`` reads the kernel's counts.
        stopped_by = _limit_hit(container)
    return ExecOutcome(
        exit_code=exit_code,
        timed_out=timed_out,
        output_tail=tail.decode("utf-8", "replace")[-OUTPUT_TAIL_CHARS:],
        seconds=round(seconds, 3),
        output_bytes=total,
        stopped_by=stopped_by,
    )


def kill_quietly(container: Container) -> None:
    with contextlib.suppress(APIError):
        container.kill()


def put_files(container: Container, files: Mapping[str, bytes], *, mode: int = 0o644) -> None:
    """Write ``{absolute path: bytes}`` into the container (parents are created)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(PurePosixPath(path).relative_to("/").as_posix())
            info.size, info.mode, info.mtime = len(data), mode, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    container.put_archive("/", buffer.getvalue())


def put_directory(container: Container, source: Path, destination: str) -> None:
    """Copy the host directory ``source`` to ``destination`` in the container."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(source, arcname=PurePosixPath(destination).relative_to("/").as_posix())
    container.put_archive("/", buffer.getvalue())


def copy_out(container: Container, path: str) -> IO[bytes]:
    """The tar stream of ``path`` (its basename at the top), spooled to disk when large."""
    stream, _ = container.get_archive(path)
    spool = tempfile.SpooledTemporaryFile(max_size=64 * 1024 * 1024)  # noqa: SIM115 - returned open
    for chunk in stream:
        spool.write(chunk)
    spool.seek(0)
    return spool


def sanitized(archive: IO[bytes]) -> IO[bytes]:
    """A copy of a tar stream without special files, links that resolve outside it, or
    setuid bits.

    The submission is agent-controlled and root unpacks it. Links are resolved through
    the archive's own symlinks, not read lexically: ``s -> .`` plus ``x -> s/s/../../..``
    resolves to ``/`` although each link alone looks harmless.
    """
    with tarfile.open(fileobj=archive) as source:
        members = source.getmembers()
        symlinks = {_normal(member.name): member.linkname for member in members if member.issym()}
        regular = {_normal(member.name) for member in members if member.isfile()}
        clean = tempfile.SpooledTemporaryFile(max_size=64 * 1024 * 1024)  # noqa: SIM115 - returned open
        with tarfile.open(fileobj=clean, mode="w") as target:
            for member in members:
                if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
                    continue
                if member.issym() and _resolve(_normal(member.name), symlinks) is None:
                    continue
                if member.islnk() and _normal(member.linkname) not in regular:
                    continue
                member.mode &= 0o777
                target.addfile(member, source.extractfile(member) if member.isfile() else None)
    clean.seek(0)
    return clean


_MAX_LINK_HOPS = 40  # as the kernel's ELOOP limit


def _normal(name: str) -> tuple[str, ...]:
    """An archive member name as path parts below the archive root."""
    return tuple(part for part in PurePosixPath(name).parts if part not in (".", "/"))


def _resolve(path: tuple[str, ...], symlinks: dict[tuple[str, ...], str]) -> tuple[str, ...] | None:
    """Where ``path`` leads when every symlink on the way is followed; None if it leaves the
    archive's top directory (the submission's root), is absolute, or loops."""
    resolved: list[str] = []
    pending = list(path)
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if len(resolved) <= 1:  # the top entry is the submission root itself
                return None
            resolved.pop()
            continue
        candidate = (*resolved, part)
        if candidate in symlinks:
            hops += 1
            target = symlinks[candidate]
            if hops > _MAX_LINK_HOPS or PurePosixPath(target).is_absolute():
                return None
            pending = [*PurePosixPath(target).parts, *pending]
            continue
        resolved.append(part)
    return tuple(resolved)


READ_FILE_LIMIT_BYTES = 1024 * 1024


def read_directory(container: Container, path: str) -> dict[str, bytes]:
    """The regular files directly inside ``path``, by name; empty if it does not exist.
    Of a file longer than ``READ_FILE_LIMIT_BYTES`` only its tail is read (test output
    is written by the code under test, and can be any size)."""
    try:
        archive = copy_out(container, path)
    except NotFound:
        return {}
    files = {}
    with archive, tarfile.open(fileobj=archive) as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            if member.isfile() and len(parts) == 2 and (extracted := tar.extractfile(member)):
                extracted.seek(max(0, member.size - READ_FILE_LIMIT_BYTES))
                files[parts[1]] = extracted.read()
    return files

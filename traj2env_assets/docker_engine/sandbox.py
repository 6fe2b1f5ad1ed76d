"""A labelled, network-less, resource-capped container and the few things done to it.

Every container is started from an image with ``sleep infinity`` as its only process;
work happens through ``exec`` under a wall-clock deadline (``timeout`` inside the
container, and a host-side watchdog that kills the container if even that hangs).
:func:`sandbox` always removes the container: on success, on error and on interrupt.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO

import docker
from docker.errors import APIError, NotFound
from docker.models.containers import Container
from pydantic import BaseModel, Field

from traj2env_assets.docker_engine.labels import Role, project_labels

OUTPUT_TAIL_CHARS = 4000
# Grace between the in-container `timeout` and the host watchdog.
_WATCHDOG_GRACE_S = 15


class ContainerLimits(BaseModel):
    memory: str = "4g"
    cpus: float = Field(default=1.0, gt=0)
    pids: int = Field(default=512, ge=16)


class ExecOutcome(BaseModel):
    exit_code: int | None
    timed_out: bool
    output_tail: str
    seconds: float


@contextmanager
def sandbox(
    client: docker.DockerClient,
    image: str,
    *,
    role: Role,
    limits: ContainerLimits,
    labels: Mapping[str, str] | None = None,
) -> Iterator[Container]:
    container = start_container(client, image, role=role, limits=limits, labels=labels)
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
) -> Container:
    """A running sandbox container; the caller removes it (:func:`sandbox` does)."""
    return client.containers.run(
        image,
        entrypoint=["sleep", "infinity"],
        detach=True,
        init=True,
        network_mode="none",
        mem_limit=limits.memory,
        memswap_limit=limits.memory,
        pids_limit=limits.pids,
        nano_cpus=int(limits.cpus * 1e9),
        labels={**project_labels(role), **(labels or {})},
    )


def remove_quietly(container: Container) -> None:
    try:
        container.remove(force=True)
    except NotFound:
        pass
    except APIError as exc:
        # Removal already in progress (another thread or the interrupt handler).
        if exc.status_code != 409:
            raise


def exec_with_deadline(
    container: Container,
    script: str,
    *,
    timeout_s: float,
    user: str = "root",
    workdir: str = "/",
    env: Mapping[str, str] | None = None,
) -> ExecOutcome:
    started = time.monotonic()
    argv = ["timeout", "-k", "5", f"{timeout_s:.0f}", "bash", "-c", script]
    watchdog = threading.Timer(timeout_s + _WATCHDOG_GRACE_S, _kill_quietly, args=(container,))
    watchdog.start()
    try:
        exit_code, output = container.exec_run(
            argv, user=user, workdir=workdir, environment=dict(env or {})
        )
    except APIError as exc:
        exit_code, output = None, str(exc).encode()
    finally:
        watchdog.cancel()
    seconds = time.monotonic() - started
    text = (output or b"").decode("utf-8", "replace")
    return ExecOutcome(
        exit_code=exit_code,
        timed_out=exit_code in (124, 137, None) and seconds >= timeout_s,
        output_tail=text[-OUTPUT_TAIL_CHARS:],
        seconds=round(seconds, 3),
    )


def _kill_quietly(container: Container) -> None:
    try:
        container.kill()
    except APIError:
        pass


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
    spool = tempfile.SpooledTemporaryFile(max_size=64 * 1024 * 1024)
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
        clean = tempfile.SpooledTemporaryFile(max_size=64 * 1024 * 1024)
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


def read_directory(container: Container, path: str) -> dict[str, bytes]:
    """The regular files directly inside ``path``, by name; empty if it does not exist."""
    try:
        archive = copy_out(container, path)
    except NotFound:
        return {}
    files = {}
    with archive, tarfile.open(fileobj=archive) as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            if member.isfile() and len(parts) == 2 and (extracted := tar.extractfile(member)):
                files[parts[1]] = extracted.read()
    return files

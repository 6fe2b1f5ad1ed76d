"""One environment image per build context, tagged by the context's content hash.

An identical context (same files, modes, platform and base image ids) maps to the same
tag, so it is built once: a second request finds the tag and returns in milliseconds.
Builds go through ``docker buildx build`` (BuildKit; the Python SDK only drives the
legacy builder) with the engine's ``docker`` driver, so images land directly in the
engine's store and BuildKit's layer cache shares the base and dependency layers between
candidates. A failed or timed-out build raises :class:`ImageBuildFailedError` carrying
the skip reason ``image_build_failed`` and the tail of the build log.

Usage::

    image = build_image(client, context_dir, timeout_s=600)   # the task images' platform
    image.tag, image.built   # "traj2env/env:3f2a...", False when it was already there
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import tempfile
import time
from pathlib import Path

import docker
from docker.errors import ImageNotFound
from filelock import FileLock
from pydantic import BaseModel

from traj2env_assets.docker_engine.connection import DEFAULT_PLATFORM, image_present, resolve_platform
from traj2env_assets.docker_engine.labels import CONTENT_HASH_LABEL, project_labels

IMAGE_REPOSITORY = "traj2env/env"
IMAGE_BUILD_FAILED = "image_build_failed"
# Bump when the way a context turns into an image changes, so old tags are not reused.
BUILD_RECIPE_VERSION = "1"
_FROM_LINE = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", re.IGNORECASE | re.MULTILINE)
LOG_TAIL_LINES = 40


class BuiltImage(BaseModel):
    tag: str
    image_id: str
    content_hash: str
    platform: str
    built: bool
    seconds: float


class ImageBuildFailedError(RuntimeError):
    """The build failed or timed out; ``reason`` is the report's skip reason."""

    reason = IMAGE_BUILD_FAILED

    def __init__(self, message: str, log_tail: str) -> None:
        super().__init__(f"{message}\n{log_tail}")
        self.log_tail = log_tail


def context_hash(client: docker.DockerClient, context_dir: Path, platform: str) -> str:
    """sha256 over every file's path, mode and bytes, the platform and the base image ids."""
    digest = hashlib.sha256()
    digest.update(f"recipe={BUILD_RECIPE_VERSION}\nplatform={platform}\n".encode())
    for path in sorted(p for p in context_dir.rglob("*") if not p.is_dir()):
        relative = path.relative_to(context_dir).as_posix()
        if path.is_symlink():
            digest.update(f"L {relative} -> {path.readlink()}\n".encode())
            continue
        executable = "x" if path.stat().st_mode & 0o111 else "-"
        digest.update(f"F {relative} {executable} {path.stat().st_size}\n".encode())
        digest.update(path.read_bytes())
    for base in _base_images(context_dir / "Dockerfile"):
        digest.update(f"FROM {base} {_image_id_or_absent(client, base)}\n".encode())
    return digest.hexdigest()


def find_image(
    client: docker.DockerClient, context_dir: Path, *, platform: str = DEFAULT_PLATFORM
) -> BuiltImage | None:
    """The image of ``context_dir`` if it already exists, without building anything."""
    started = time.monotonic()
    resolved = resolve_platform(client, platform)
    content = context_hash(client, context_dir, resolved)
    tag = _tag(content)
    try:
        image_id = client.images.get(tag).id
    except ImageNotFound:
        return None
    return BuiltImage(
        tag=tag,
        image_id=image_id,
        content_hash=content,
        platform=resolved,
        built=False,
        seconds=round(time.monotonic() - started, 3),
    )


def _tag(content: str) -> str:
    return f"{IMAGE_REPOSITORY}:{content[:32]}"


def build_image(
    client: docker.DockerClient,
    context_dir: Path,
    *,
    platform: str = DEFAULT_PLATFORM,
    timeout_s: float = 600,
    lock_dir: Path | None = None,
) -> BuiltImage:
    """Build ``context_dir`` unless an image with its content hash already exists."""
    started = time.monotonic()
    resolved = resolve_platform(client, platform)
    content = context_hash(client, context_dir, resolved)
    tag = _tag(content)
    lock_root = lock_dir or Path(tempfile.gettempdir()) / "traj2env-build-locks"
    lock_root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_root / f"{content[:32]}.lock")):
        built = False
        if not image_present(client, tag):
            _buildx(context_dir, tag, resolved, content, timeout_s)
            built = True
    return BuiltImage(
        tag=tag,
        image_id=client.images.get(tag).id,
        content_hash=content,
        platform=resolved,
        built=built,
        seconds=round(time.monotonic() - started, 3),
    )


def _buildx(context_dir: Path, tag: str, platform: str, content: str, timeout_s: float) -> None:
    labels = project_labels("task-image") | {CONTENT_HASH_LABEL: content}
    argv = ["docker", "buildx", "build", "--progress", "plain", "--platform", platform, "-t", tag]
    for key, value in labels.items():
        argv += ["--label", f"{key}={value}"]
    argv.append(str(context_dir))
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        log = _text(exc.stdout) + _text(exc.stderr)
        raise ImageBuildFailedError(f"build timed out after {timeout_s:.0f}s", _tail(log)) from exc
    except FileNotFoundError as exc:
        raise ImageBuildFailedError("the docker CLI is not installed", "") from exc
    if result.returncode != 0:
        raise ImageBuildFailedError(
            f"docker buildx build exited {result.returncode}", _tail(result.stdout + result.stderr)
        )


def _base_images(dockerfile: Path) -> list[str]:
    if not dockerfile.is_file():
        return []
    return _FROM_LINE.findall(dockerfile.read_text(encoding="utf-8", errors="replace"))


def _image_id_or_absent(client: docker.DockerClient, name: str) -> str:
    try:
        return client.images.get(name).id
    except ImageNotFound:
        return "absent"


def _text(value: str | bytes | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _tail(log: str) -> str:
    return "\n".join(log.splitlines()[-LOG_TAIL_LINES:])

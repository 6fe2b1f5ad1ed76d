"""Content-hashed builds: identical contexts build once; failures carry the log tail."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from traj2env_assets.docker_engine.connection import engine_platform
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.image_build import (
    IMAGE_BUILD_FAILED,
    BuiltImage,
    ImageBuildFailedError,
    build_image,
    context_hash,
)
from traj2env_assets.docker_engine.labels import CONTENT_HASH_LABEL, PROJECT_LABEL, ROLE_LABEL
from traj2env_assets.harbor.writer import write_task
from traj2env_assets_tests.docker.sample_tasks import python_task

pytestmark = pytest.mark.docker


def _context(tmp_path: Path, dockerfile: str, files: dict[str, str] | None = None) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "Dockerfile").write_text(dockerfile)
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_identical_context_builds_once(engine: DockerEngine, tmp_path: Path) -> None:
    # A marker of its own: an engine that is not fresh may hold a fixed marker's image already.
    marker = f"build-once-{uuid.uuid4().hex}"
    first_dir = write_task(python_task(marker=marker), tmp_path / "a").environment_dir
    second_dir = write_task(python_task(marker=marker), tmp_path / "b").environment_dir
    first = engine.build(first_dir)
    second = engine.build(second_dir)
    assert first.built is True
    assert second.built is False
    assert second.tag == first.tag and second.image_id == first.image_id


def test_images_carry_project_labels_and_content_hash(engine: DockerEngine, python_image: BuiltImage) -> None:
    labels = engine.client.images.get(python_image.tag).labels
    assert labels[PROJECT_LABEL] == "traj2env"
    assert labels[ROLE_LABEL] == "task-image"
    assert labels[CONTENT_HASH_LABEL] == python_image.content_hash


def test_any_byte_or_mode_change_changes_the_hash(engine: DockerEngine, tmp_path: Path) -> None:
    context = _context(tmp_path, "FROM python:3.13-slim\n", {"a.txt": "one"})
    original = context_hash(engine.client, context, "linux/amd64")
    (context / "a.txt").write_text("two")
    changed_bytes = context_hash(engine.client, context, "linux/amd64")
    (context / "a.txt").chmod(0o755)
    changed_mode = context_hash(engine.client, context, "linux/amd64")
    other_platform = context_hash(engine.client, context, "linux/arm64")
    assert len({original, changed_bytes, changed_mode, other_platform}) == 4


def test_native_platform_resolves_to_the_engine(engine: DockerEngine, tmp_path: Path) -> None:
    context = _context(tmp_path, "FROM python:3.13-slim\nLABEL purpose=native-test\n")
    image = build_image(engine.client, context, platform="native", timeout_s=120)
    assert image.platform == engine_platform(engine.client)


def test_failed_build_reports_image_build_failed_with_log_tail(engine: DockerEngine, tmp_path: Path) -> None:
    context = _context(tmp_path, "FROM python:3.13-slim\nRUN echo about-to-fail && exit 3\n")
    with pytest.raises(ImageBuildFailedError) as failure:
        engine.build(context)
    assert failure.value.reason == IMAGE_BUILD_FAILED
    assert "about-to-fail" in failure.value.log_tail
    assert "exit code: 3" in failure.value.log_tail


def test_build_timeout_is_a_build_failure(engine: DockerEngine, tmp_path: Path) -> None:
    context = _context(tmp_path, "FROM python:3.13-slim\nRUN sleep 60\n")
    with pytest.raises(ImageBuildFailedError, match="timed out after 3s"):
        engine.build(context, timeout_s=3)

"""Fixtures for the real-engine tests: the engine, the bases, and the sample tasks built.

The session ends by asserting that no container of this session (project label plus a
session label, so a concurrent pipeline or test worker on the same engine does not
interfere), network or volume carrying the project label is left. The task images the
session built are removed by the root conftest once every worker is done.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.image_build import BuiltImage
from traj2env_assets.docker_engine.prune import leftovers
from traj2env_assets.harbor.writer import WrittenTask, write_task
from traj2env_assets.verification.trial import TrialTask
from traj2env_assets_tests.docker.gating import write_gated_task
from traj2env_assets_tests.docker.sample_tasks import build_task, node_task, python_task


@pytest.fixture(scope="session")
def engine() -> Iterator[DockerEngine]:
    engine = DockerEngine(
        container_memory="1g",
        agent_timeout_s=120,
        verifier_timeout_s=180,
        build_timeout_s=300,
        container_labels={"traj2env.test_session": uuid.uuid4().hex},
    )
    engine.ensure_bases()
    yield engine
    # The task images are removed at the end of the whole session (the root conftest).
    assert leftovers(engine.client, engine.container_labels) == {"containers": [], "networks": [], "volumes": []}


@pytest.fixture(scope="session")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dataset")


@pytest.fixture(scope="session")
def python_written(engine: DockerEngine, dataset_dir: Path) -> WrittenTask:
    """The Python task with the behaviour gate calibrated in its image, as published."""
    return write_gated_task(engine, python_task(), dataset_dir)[0]


@pytest.fixture(scope="session")
def node_written(dataset_dir: Path) -> WrittenTask:
    return write_task(node_task(), dataset_dir)


@pytest.fixture(scope="session")
def build_written(dataset_dir: Path) -> WrittenTask:
    return write_task(build_task(), dataset_dir)


@pytest.fixture(scope="session")
def python_image(engine: DockerEngine, python_written: WrittenTask) -> BuiltImage:
    return engine.build(python_written.environment_dir)


@pytest.fixture(scope="session")
def node_image(engine: DockerEngine, node_written: WrittenTask) -> BuiltImage:
    return engine.build(node_written.environment_dir)


@pytest.fixture(scope="session")
def python_trial(python_image: BuiltImage, python_written: WrittenTask) -> TrialTask:
    return TrialTask(image=python_image.tag, task_dir=python_written.path)


@pytest.fixture(scope="session")
def node_trial(node_image: BuiltImage, node_written: WrittenTask) -> TrialTask:
    return TrialTask(image=node_image.tag, task_dir=node_written.path)

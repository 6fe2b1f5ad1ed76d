from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from traj2env_assets_tests.deploy.deployment import Deployment, free_port


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """The compose deployment, up and healthy; brought down at the end, which must leave no
    container (run containers included), network or volume behind."""
    inbox: Path = tmp_path_factory.mktemp("inbox")
    deployed = Deployment(f"traj2env-test-{uuid.uuid4().hex[:8]}", inbox, free_port())
    try:
        deployed.script("up")
        yield deployed
    finally:
        deployed.script("down", timeout=300)
    assert deployed.leftovers() == {"containers": [], "volumes": [], "networks": []}

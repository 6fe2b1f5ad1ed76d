"""The base images exist under their public names and honestly match their tags."""

from __future__ import annotations

import pytest

from traj2env_assets.docker_engine.base_images import (
    NODE_SLIM,
    PYTHON_SLIM,
    BaseImageBuildError,
    BaseImageSpec,
    _older_stand_in,
    ensure_base_images,
)
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.labels import project_labels

pytestmark = pytest.mark.docker


def _run(engine: DockerEngine, image: str, script: str) -> str:
    output = engine.client.containers.run(
        image,
        ["bash", "-c", script],
        remove=True,
        network_mode="none",
        labels=project_labels("probe"),
    )
    return output.decode().strip()


def test_present_bases_are_kept_not_rebuilt(engine: DockerEngine) -> None:
    outcomes = engine.ensure_bases()
    assert [(o.name, o.status) for o in outcomes] == [
        ("python:3.13-slim", "found"),
        ("node:20-slim", "found"),
    ]
    assert outcomes[0].version.startswith("Python 3.13.")
    assert outcomes[1].version.startswith("v20.")


def test_python_base_has_what_official_image_users_rely_on(engine: DockerEngine) -> None:
    output = _run(
        engine,
        "python:3.13-slim",
        "python --version && pip --version && python -m pytest --version && "
        "getent passwd 1000 | cut -d: -f1 && "
        "pip install --no-index --dry-run nothing-here 2>&1 | grep -c externally-managed || true",
    )
    lines = output.splitlines()
    assert lines[0].startswith("Python 3.13.")
    assert lines[1].startswith("pip ")
    assert lines[2].startswith("pytest ")
    assert lines[3] == "app"
    # No PEP 668 refusal: `pip install` behaves as in the official image.
    assert lines[4] == "0"


def test_node_base_has_node_20_npm_and_the_node_user(engine: DockerEngine) -> None:
    output = _run(engine, "node:20-slim", "node --version && npm --version && id -un 1000")
    node_version, npm_version, user = output.splitlines()
    assert node_version.startswith("v20.")
    assert npm_version.split(".")[0].isdigit()
    assert user == "node"


def test_both_bases_carry_tmux_for_harbors_terminus_2(engine: DockerEngine) -> None:
    for image in ("python:3.13-slim", "node:20-slim"):
        assert _run(engine, image, "tmux -V").startswith("tmux 3.")


def test_a_stand_in_that_does_not_match_its_tag_is_refused(engine: DockerEngine) -> None:
    mislabelled = PYTHON_SLIM.model_copy(update={"version_prefix": "Python 3.12."})
    with pytest.raises(BaseImageBuildError, match="does not match its tag"):
        ensure_base_images(engine.client, [mislabelled])


def test_node_spec_checks_the_node_major_version() -> None:
    assert NODE_SLIM.version_command == ["node", "--version"]
    assert NODE_SLIM.version_prefix == "v20."


@pytest.mark.slow
def test_a_missing_base_is_built_from_debian_and_imported(engine: DockerEngine) -> None:
    """The registry-less path end to end: debootstrap, apt in a chroot, docker import."""
    spec = BaseImageSpec(
        name="traj2env-test/bash:trixie",
        packages=["bash"],
        setup="useradd --uid 1000 probe\n",
        env={"PATH": "/usr/bin:/bin"},
        cmd=["bash"],
        version_command=["bash", "-c", "echo trixie-$(cut -d. -f1 /etc/debian_version)"],
        version_prefix="trixie-13",
    )
    try:
        [outcome] = ensure_base_images(engine.client, [spec])
        assert (outcome.status, outcome.version) == ("built", "trixie-13")
        image = engine.client.images.get(spec.name)
        assert image.labels["traj2env.role"] == "base"
        assert image.labels["traj2env.stand_in_for"] == spec.name
        assert image.labels["traj2env.packages"] == "bash"
        assert not _older_stand_in(engine.client, spec)
        # A spec that since added a package finds this stand-in older: it is rebuilt.
        assert _older_stand_in(engine.client, spec.model_copy(update={"packages": ["bash", "tmux"]}))
        assert _run(engine, spec.name, "id -un 1000") == "probe"
    finally:
        engine.client.images.remove(spec.name, force=True)

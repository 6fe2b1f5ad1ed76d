"""The Dagster resource and asset, and the `bases` / `prune` subcommands."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from traj2env_assets.config import RunConfigFile, RunSettings
from traj2env_assets.defs.docker import DockerEngineResource, base_images, matrix_metadata
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.docker_engine.commands import add_docker_commands
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.verification.trial import TrialTask, run_matrix


def _pipeline(tmp_path: Path, **options: str) -> PipelineResource:
    config = RunConfigFile.model_validate({"pipeline": {"options": options}})
    return PipelineResource.from_settings(RunSettings.resolve(config, tmp_path))


def test_resource_takes_platform_and_memory_from_pipeline_options(tmp_path: Path) -> None:
    engine = DockerEngineResource(pipeline=_pipeline(tmp_path, platform="native", container_memory="2g")).engine()
    assert (engine.platform, engine.container_memory) == ("native", "2g")
    assert engine.trial_settings().limits.memory == "2g"


def test_docker_commands_register_bases_and_prune() -> None:
    parser = argparse.ArgumentParser()
    add_docker_commands(parser.add_subparsers(dest="command", required=True))
    assert parser.parse_args(["bases"]).command == "bases"
    assert parser.parse_args(["prune", "--include-bases"]).include_bases is True


@pytest.mark.docker
def test_base_images_asset_reports_what_it_found(engine: DockerEngine, tmp_path: Path) -> None:
    resources = {"docker_engine": DockerEngineResource(pipeline=_pipeline(tmp_path))}
    result = dg.materialize([base_images], resources=resources)
    assert result.success
    metadata = result.asset_materializations_for_node("base_images")[0].metadata
    assert metadata["found"].value == ["python:3.13-slim", "node:20-slim"]
    assert metadata["built"].value == []
    images = metadata["images"].value
    assert isinstance(images, str)
    assert "Python 3.13." in images


@pytest.mark.docker
def test_bases_command_runs_on_its_own(engine: DockerEngine) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "traj2env_assets.docker_engine.commands", "bases"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert completed.stdout.splitlines()[0].startswith("python:3.13-slim: found (Python 3.13.")
    assert completed.stdout.splitlines()[1].startswith("node:20-slim: found (v20.")


@pytest.mark.docker
def test_matrix_metadata_has_one_reward_per_control(engine: DockerEngine, python_trial: TrialTask) -> None:
    metadata = matrix_metadata(run_matrix(engine, python_trial, parallelism=2))
    assert metadata["controls_passed"] is True
    assert [
        metadata[f"reward_{name}"] for name in ("reference", "noop", "forge_reward", "pytest_hook", "tests_edit")
    ] == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert "tamper_detected" in metadata["controls"].value

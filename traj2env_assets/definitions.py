"""The traj2env code location: every stage asset, the jobs, the sensors and their resources.

A composition root: it chooses the families in play (every registered one unless the
caller hands over another collection) and gives them to the assets, as the ``families``
resource and to the factories of the per-family assets.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Protocol, cast

import dagster as dg

from traj2env_assets.defs.dataset import harbor_dataset
from traj2env_assets.defs.docker import DockerEngineResource, base_images
from traj2env_assets.defs.docker_stages import REFS_IO_MANAGER
from traj2env_assets.defs.jobs import (
    PIPELINE_JOB,
    base_images_job,
    run_report_job,
    trajectory_pipeline_job,
    trajectory_spec_job,
)
from traj2env_assets.defs.llm import LlmResource
from traj2env_assets.defs.resources import FAMILIES_RESOURCE, PipelineResource
from traj2env_assets.defs.sensors import report_refresh_sensor, trajectory_folder_sensor
from traj2env_assets.defs.trajectory_spec import trajectory_spec
from traj2env_assets.families.registry import Families, registered_families
from traj2env_assets.stage_names import PER_TRAJECTORY_STAGES, STAGES, StageName
from traj2env_assets.stages.candidates.asset import candidates_asset_key
from traj2env_assets.stages.report.asset import no_orphaned_staging, report_matches_stage_files


class StageAssetModule(Protocol):
    """What every ``traj2env_assets/stages/<stage>/asset.py`` provides."""

    def assets(self, families: Families) -> list[dg.AssetsDefinition]:
        """The stage's assets, given the families in play."""
        ...


def assets_of(stage: StageName, families: Families) -> list[dg.AssetsDefinition]:
    """A stage's assets, from its folder's asset module: the folder is named for the stage."""
    module = cast(StageAssetModule, importlib.import_module(f"traj2env_assets.stages.{stage}.asset"))
    return module.assets(families)


def stage_assets(families: Families) -> list[dg.AssetsDefinition]:
    """The assets partitioned by trajectory, in stage order; one candidates asset per family."""
    return [asset for stage in PER_TRAJECTORY_STAGES for asset in assets_of(stage, families)]


def pipeline_job(defs: dg.Definitions, families: Families, selected: list[str]) -> dg.JobDefinition:
    """The per-trajectory job of a run of the ``selected`` families of ``families`` (those
    ``defs`` was built with): without the candidates assets of the families it leaves out,
    each of which would be a step per batch, and a materialization per trajectory,
    recording only that it was not selected."""
    job = defs.resolve_job_def(PIPELINE_JOB)
    left_out = {candidates_asset_key(f) for f in families if f.name not in selected}
    if not left_out:
        return job
    return job.get_subset(asset_selection={key for asset in stage_assets(families) for key in asset.keys} - left_out)


def build_definitions(
    pipeline: PipelineResource,
    docker_engine: DockerEngineResource | None = None,
    llm: LlmResource | None = None,
    families: Families | None = None,
) -> dg.Definitions:
    """The code location; the CLI builds it with its own settings, the UI with the environment's.
    ``families``: those in play (default: every registered one); the run's selection must be among them."""
    families = registered_families() if families is None else families
    # A selected name outside the collection fails here, not in the run's first step.
    families.selected(pipeline.options().families)
    return dg.Definitions(
        assets=[
            *(asset for stage in STAGES for asset in assets_of(stage, families)),
            base_images,
            harbor_dataset,
            trajectory_spec,
        ],
        asset_checks=[report_matches_stage_files, no_orphaned_staging],
        sensors=[trajectory_folder_sensor, report_refresh_sensor],
        jobs=[trajectory_pipeline_job, run_report_job, base_images_job, trajectory_spec_job],
        resources={
            "pipeline": pipeline,
            "docker_engine": docker_engine or DockerEngineResource(pipeline=pipeline),
            "llm": llm or LlmResource(pipeline=pipeline),
            FAMILIES_RESOURCE: families,
            REFS_IO_MANAGER: dg.mem_io_manager,
        },
        executor=dg.in_process_executor,
    )


defs = build_definitions(
    PipelineResource.from_files(
        Path(os.environ.get("TRAJ2ENV_CONFIG", "examples/trajectory-to-env.yaml")),
        Path(os.environ.get("TRAJ2ENV_WORKSPACE", "workspace")),
    )
)

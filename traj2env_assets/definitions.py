"""The traj2env code location: every stage asset, the folder sensor and their resources."""

from __future__ import annotations

import os

import dagster as dg

from traj2env_assets.defs.docker import DockerEngineResource, base_images
from traj2env_assets.defs.ingest import scan_verdict, trajectory_atif
from traj2env_assets.defs.llm import LlmResource
from traj2env_assets.defs.repair import (
    published_repair_tasks,
    repair_candidates,
    repair_task_images,
    repair_trials,
)
from traj2env_assets.defs.replay import replay_record
from traj2env_assets.defs.report import run_report
from traj2env_assets.defs.resources import PipelineResource, WorkspaceResource
from traj2env_assets.defs.sensors import PER_TRAJECTORY_ASSETS, trajectory_folder_sensor

PIPELINE_JOB = "trajectory_pipeline"
REPORT_JOB = "run_report_job"
BASE_IMAGES_JOB = "base_images_job"
STAGE_ASSETS = [
    trajectory_atif,
    scan_verdict,
    replay_record,
    repair_candidates,
    repair_task_images,
    repair_trials,
    published_repair_tasks,
]


def build_definitions(
    workspace: WorkspaceResource,
    pipeline: PipelineResource,
    docker_engine: DockerEngineResource | None = None,
) -> dg.Definitions:
    """The code location; the CLI builds it with its own config, the UI with the environment's."""
    return dg.Definitions(
        assets=[*STAGE_ASSETS, base_images, run_report],
        sensors=[trajectory_folder_sensor],
        jobs=[
            dg.define_asset_job(PIPELINE_JOB, selection=PER_TRAJECTORY_ASSETS),
            dg.define_asset_job(REPORT_JOB, selection=[run_report]),
            dg.define_asset_job(BASE_IMAGES_JOB, selection=[base_images]),
        ],
        resources={
            "workspace": workspace,
            "pipeline": pipeline,
            "docker_engine": docker_engine or DockerEngineResource(),
            "llm": LlmResource.from_options(pipeline.options(), workspace),
        },
        executor=dg.in_process_executor,
    )


defs = build_definitions(
    WorkspaceResource(root=os.environ.get("TRAJ2ENV_WORKSPACE", "workspace")),
    PipelineResource(config_path=os.environ.get("TRAJ2ENV_CONFIG", "examples/trajectory-to-env.yaml")),
)

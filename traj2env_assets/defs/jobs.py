"""The code location's jobs: the per-trajectory pipeline, the report, the base images, the spec."""

import dagster as dg

from traj2env_assets.stage_names import PER_TRAJECTORY_STAGES

PIPELINE_JOB = "trajectory_pipeline"
REPORT_JOB = "run_report_job"
BASE_IMAGES_JOB = "base_images_job"
TRAJECTORY_SPEC_JOB = "trajectory_spec_job"

# Every stage partitioned by trajectory, by key prefix: the candidates stage's assets are
# keyed ``candidates/<family>``, one per family in play.
PER_TRAJECTORY_ASSETS = dg.AssetSelection.key_prefixes(*([stage] for stage in PER_TRAJECTORY_STAGES))

trajectory_pipeline_job = dg.define_asset_job(PIPELINE_JOB, selection=PER_TRAJECTORY_ASSETS)
run_report_job = dg.define_asset_job(REPORT_JOB, selection=dg.AssetSelection.keys("report", "harbor_dataset"))
base_images_job = dg.define_asset_job(BASE_IMAGES_JOB, selection=dg.AssetSelection.keys("base_images"))
trajectory_spec_job = dg.define_asset_job(TRAJECTORY_SPEC_JOB, selection=dg.AssetSelection.keys("trajectory_spec"))

"""The code location's jobs: the per-trajectory pipeline, the report, the base images, the spec."""

import dagster as dg

PIPELINE_JOB = "trajectory_pipeline"
REPORT_JOB = "run_report_job"
BASE_IMAGES_JOB = "base_images_job"
TRAJECTORY_SPEC_JOB = "trajectory_spec_job"

# Every stage partitioned by trajectory: all but the unpartitioned report, dataset, base
# images and the optional Trajectory spec.
PER_TRAJECTORY_ASSETS = dg.AssetSelection.all().materializable() - dg.AssetSelection.keys(
    "run_report", "base_images", "harbor_dataset", "trajectory_spec"
)

trajectory_pipeline_job = dg.define_asset_job(PIPELINE_JOB, selection=PER_TRAJECTORY_ASSETS)
run_report_job = dg.define_asset_job(REPORT_JOB, selection=dg.AssetSelection.keys("run_report", "harbor_dataset"))
base_images_job = dg.define_asset_job(BASE_IMAGES_JOB, selection=dg.AssetSelection.keys("base_images"))
trajectory_spec_job = dg.define_asset_job(TRAJECTORY_SPEC_JOB, selection=dg.AssetSelection.keys("trajectory_spec"))

"""The sensors: the folder sensor (new or changed trajectory files become partitions and
runs) and the report sensor (a finished pipeline run refreshes the report).

Both start stopped on a workstation and running where ``TRAJ2ENV_SENSORS=running`` (the
compose deployment sets it); a state set in the UI or through GraphQL wins over either.
"""

import json
import os

import dagster as dg

from traj2env_assets.defs.jobs import run_report_job, trajectory_pipeline_job
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.pools import apply_pool_limits
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.sources import load_registry, register_sources

SENSORS_ENV = "TRAJ2ENV_SENSORS"


def default_sensor_status() -> dg.DefaultSensorStatus:
    running = os.environ.get(SENSORS_ENV, "").strip().lower() == "running"
    return dg.DefaultSensorStatus.RUNNING if running else dg.DefaultSensorStatus.STOPPED


@dg.sensor(
    name="trajectory_folder_sensor",
    minimum_interval_seconds=30,
    default_status=default_sensor_status(),
    job=trajectory_pipeline_job,
    description="Watches the source folder (recursively) for ATIF .json and agent-log .jsonl files.",
)
def trajectory_folder_sensor(context: dg.SensorEvaluationContext, pipeline: PipelineResource) -> dg.SensorResult:
    # The cursor maps each partition key to the content hash last launched, so a file
    # is launched once per content: unchanged files never again, changed files once more.
    # A partition that already exists when the sensor first sees its file was added by
    # someone else (the CLI, the UI, GraphQL), who ran it: the sensor adopts it without a run.
    launched: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    settings = pipeline.settings()
    workspace = pipeline.workspace()
    apply_pool_limits(context.instance, settings.options)
    registration = register_sources(workspace, settings.source.path, settings.source.format, settings.options.limit)
    registry = load_registry(workspace)
    known = set(trajectories.get_partition_keys(dynamic_partitions_store=context.instance))
    new_keys = [key for key in registry.sources if key not in known]
    run_requests = []
    for key, source in sorted(registry.sources.items()):
        digest = source.content_sha256[:16]
        if launched.get(key) == digest:
            continue
        adopted = key not in launched and key in known
        launched[key] = digest
        if not adopted:
            run_requests.append(dg.RunRequest(run_key=f"{key}:{digest}", partition_key=key))
    if not run_requests and not new_keys:
        return dg.SensorResult(
            skip_reason=f"no new or changed trajectories ({len(registration.rejected)} rejected inputs)",
            cursor=json.dumps(launched, sort_keys=True),
        )
    return dg.SensorResult(
        run_requests=run_requests,
        dynamic_partitions_requests=[trajectories.build_add_request(new_keys)] if new_keys else [],
        cursor=json.dumps(launched, sort_keys=True),
    )


@dg.run_status_sensor(
    name="report_refresh_sensor",
    run_status=dg.DagsterRunStatus.SUCCESS,
    monitored_jobs=[trajectory_pipeline_job],
    request_job=run_report_job,
    minimum_interval_seconds=15,
    default_status=default_sensor_status(),
    description="After each successful pipeline run, rewrites report.json, the funnel and the dataset manifest.",
)
def report_refresh_sensor(context: dg.RunStatusSensorContext) -> dg.RunRequest:
    return dg.RunRequest(run_key=f"report-after-{context.dagster_run.run_id}")

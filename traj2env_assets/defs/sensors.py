"""The folder sensor: new or changed trajectory files become partitions and runs."""


import json

import dagster as dg

from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.pools import apply_pool_limits
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.sources import load_registry, register_sources

# Every stage partitioned by trajectory (the report and the base images are not).
PER_TRAJECTORY_ASSETS = dg.AssetSelection.all().materializable() - dg.AssetSelection.keys("run_report", "base_images")


@dg.sensor(
    name="trajectory_folder_sensor",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.STOPPED,
    target=PER_TRAJECTORY_ASSETS,
    description="Watches the source folder (recursively) for ATIF .json and agent-log .jsonl files.",
)
def trajectory_folder_sensor(context: dg.SensorEvaluationContext, pipeline: PipelineResource) -> dg.SensorResult:
    # The cursor maps each partition key to the content hash last launched, so a file
    # is launched once per content: unchanged files never again, changed files once more.
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
        launched[key] = digest
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

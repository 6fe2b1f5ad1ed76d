"""Stage 9: ``published_tasks``, every candidate whose trials passed moved into the destination."""


from collections.abc import Iterator

import dagster as dg

from traj2env_assets.defs.materialize import partition_outputs
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.defs.stages import PER_TRAJECTORY, partition_statuses_of, stage_partition_figures
from traj2env_assets.lifecycle.publishing import publish


@dg.asset(
    partitions_def=trajectories,
    deps=["trials"],
    group_name="publish",
    kinds={"harbor"},
    backfill_policy=PER_TRAJECTORY,
    dagster_type=dg.Nothing,
    description="Tasks whose controls all passed, moved atomically into <destination>/<task-id>/; "
    "an existing task with the same id is kept (duplicate).",
)
def published_tasks(
    context: dg.AssetExecutionContext, pipeline: PipelineResource
) -> Iterator[dg.Output | dg.AssetMaterialization]:
    keys = list(context.partition_keys)
    destination = pipeline.settings().output.destination
    publish(pipeline.workspace(), destination, [s for key in keys for s in partition_statuses_of(pipeline, key)])
    figures, common = stage_partition_figures(
        pipeline, keys, "publish", lambda _: {"destination": dg.MetadataValue.path(str(destination))}
    )
    yield from partition_outputs(context.asset_key, figures, common)

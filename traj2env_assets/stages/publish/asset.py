"""Stage 9: ``publish``, every candidate whose trials passed moved into the destination."""

from collections.abc import Iterator

import dagster as dg

from traj2env_assets.defs.candidate_stages import (
    PER_TRAJECTORY,
    partition_statuses_of,
    stage_partition_figures,
)
from traj2env_assets.defs.materialize import NOTHING, partition_outputs
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.families.registry import Families
from traj2env_assets.lifecycle.status import CandidateStatus
from traj2env_assets.stages.publish.publishing import DatasetCaps, publish, published_cards


@dg.asset(
    name="publish",
    partitions_def=trajectories,
    deps=["trials"],
    group_name="publish",
    kinds={"harbor"},
    backfill_policy=PER_TRAJECTORY,
    dagster_type=NOTHING,
    description="Tasks whose controls all passed, moved atomically into <destination>/<task-id>/; "
    "an existing task with the same id is kept (duplicate).",
)
def publish_tasks(
    context: dg.AssetExecutionContext, pipeline: PipelineResource, families: dg.ResourceParam[Families]
) -> Iterator[dg.Output | dg.AssetMaterialization]:
    keys = list(context.partition_keys)
    destination = pipeline.settings().output.destination
    options = pipeline.options()
    caps = DatasetCaps(per_group=options.max_tasks_per_group, per_project=options.max_tasks_per_project)
    statuses = [s for key in keys for s in partition_statuses_of(pipeline, families, key)]
    publish(pipeline.workspace(), destination, statuses, caps)

    def metadata(statuses: list[CandidateStatus]) -> dict[str, dg.MetadataValue]:
        cards = published_cards(statuses)
        shown: dict[str, dg.MetadataValue] = {"destination": dg.MetadataValue.path(str(destination))}
        # The cards of the partition's published tasks, for review in the UI.
        return {**shown, "task_cards": dg.MetadataValue.md("\n\n---\n\n".join(cards))} if cards else shown

    figures, common = stage_partition_figures(pipeline, families, keys, "publish", metadata)
    yield from partition_outputs(context.asset_key, figures, common)


def assets(families: Families) -> list[dg.AssetsDefinition]:
    return [publish_tasks]

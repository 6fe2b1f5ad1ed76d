"""Stage 4: one ``candidates/<family>`` asset per family in play, from one factory."""

import inspect
from collections.abc import Iterator

import dagster as dg

from traj2env_assets.defs.materialize import NOTHING, PartitionFigures, partition_outputs
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.defs.tables import stage_figures
from traj2env_assets.families.contract import Family
from traj2env_assets.families.registry import Families
from traj2env_assets.lifecycle.status import partition_statuses
from traj2env_assets.stages.candidates.mining import mine_partition

CANDIDATES_GROUP = "candidates"


def candidates_asset_key(family: Family) -> dg.AssetKey:
    return dg.AssetKey([CANDIDATES_GROUP, family.name])


def candidates_asset(family: Family) -> dg.AssetsDefinition:
    @dg.asset(
        key=candidates_asset_key(family),
        partitions_def=trajectories,
        deps=["replay"],
        group_name=CANDIDATES_GROUP,
        kinds={"python"},
        backfill_policy=dg.BackfillPolicy.single_run(),
        code_version=family.version,
        dagster_type=NOTHING,
        description=inspect.getdoc(type(family)),
    )
    def _candidates(
        context: dg.AssetExecutionContext, pipeline: PipelineResource
    ) -> Iterator[dg.Output | dg.AssetMaterialization]:
        workspace = pipeline.workspace()
        selected = family.name in pipeline.options().families
        figures: dict[str, PartitionFigures] = {}
        for key in context.partition_keys:
            mining = mine_partition(workspace, family, key) if selected else None
            extra = {
                "selected": selected,
                "cached": bool(mining and mining.cached),
                "skipped_reason": (mining.skipped_reason if mining else None) or "",
            }
            statuses = partition_statuses(workspace, family.name, key)
            figures[key] = stage_figures(statuses, "candidates", extra, mining.input_key if mining else None)
        yield from partition_outputs(context.asset_key, figures)

    return _candidates


def assets(families: Families) -> list[dg.AssetsDefinition]:
    return [candidates_asset(family) for family in families]

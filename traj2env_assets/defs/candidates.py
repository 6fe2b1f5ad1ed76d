"""Stage 4: one ``<family>_candidates`` asset per registered family, from one factory."""

import inspect
from collections.abc import Iterator

import dagster as dg

from traj2env_assets.defs.materialize import NOTHING, PartitionFigures, partition_outputs
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.defs.tables import stage_figures
from traj2env_assets.families.contract import Family
from traj2env_assets.lifecycle.mining import mine_partition
from traj2env_assets.lifecycle.status import partition_statuses

CANDIDATES_GROUP = "candidates"


def candidates_asset_name(family: Family) -> str:
    return f"{family.name}_candidates"


def candidates_asset(family: Family) -> dg.AssetsDefinition:
    @dg.asset(
        name=candidates_asset_name(family),
        partitions_def=trajectories,
        deps=["replay_record"],
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
            figures[key] = stage_figures(statuses, "mining", extra, mining.input_key if mining else None)
        yield from partition_outputs(context.asset_key, figures)

    return _candidates

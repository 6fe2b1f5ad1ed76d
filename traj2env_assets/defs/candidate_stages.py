"""What every candidate-stage asset shares: its backfill policy, its statuses and its figures."""

from __future__ import annotations

from collections.abc import Callable

import dagster as dg

from traj2env_assets.defs.materialize import Metadata, PartitionFigures
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.defs.tables import stage_figures
from traj2env_assets.families.registry import Families
from traj2env_assets.lifecycle.status import CandidateStatus, Stage, statuses_of

# Expensive stages run one trajectory per backfill run, so retries, pools and UI status
# stay per trajectory (the CLI still batches them into range runs).
PER_TRAJECTORY = dg.BackfillPolicy.multi_run(max_partitions_per_run=1)

ExtraMetadata = Callable[[list[CandidateStatus]], Metadata]


def partition_statuses_of(pipeline: PipelineResource, families: Families, key: str) -> list[CandidateStatus]:
    """Every candidate the run's selected families mined from one trajectory."""
    selected = families.selected(pipeline.options().families).names()
    return list(statuses_of(pipeline.workspace(), selected, [key]))


def entered(statuses: list[CandidateStatus], stage: Stage) -> list[CandidateStatus]:
    """The candidates a stage saw: those the previous stage let through."""
    return [status for status in statuses if status.ready_for(stage)]


def stage_partition_figures(
    pipeline: PipelineResource, families: Families, keys: list[str], stage: Stage, extra: ExtraMetadata | None = None
) -> tuple[dict[str, PartitionFigures], PartitionFigures]:
    """Each partition's figures, and those of a partition without candidates."""

    def figures(statuses: list[CandidateStatus]) -> PartitionFigures:
        return stage_figures(statuses, stage, extra(statuses) if extra else None)

    return {key: figures(entered(partition_statuses_of(pipeline, families, key), stage)) for key in keys}, figures([])

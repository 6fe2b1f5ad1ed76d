"""Stage 3: replay every file change over a virtual filesystem (see traj2env_assets.replay)."""

from collections.abc import Iterator

import dagster as dg

from traj2env_assets.defs.materialize import NOTHING, Metadata, PartitionFigures, partition_outputs
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.families.registry import Families
from traj2env_assets.stages.replay.partition import REPLAY_CODE_VERSION, ReplayStageResult, replay_partition

_FIGURES = ("files_rebuilt", "files_lost", "edits_applied", "edits_failed", "unsafe_paths", "commands")


def _metadata(result: ReplayStageResult) -> Metadata:
    figures = result.fidelity.model_dump() if result.fidelity else {}
    table = "| figure | value |\n|---|---|\n" + "\n".join(f"| {name} | {figures.get(name, 0)} |" for name in _FIGURES)
    return {
        "path": dg.MetadataValue.path(str(result.path)),
        "status": result.outcome.status,
        "cached": result.cached,
        "reason": result.outcome.reason or "",
        **{name: int(figures.get(name, 0)) for name in _FIGURES},
        "fidelity": dg.MetadataValue.md(table),
        **_repository_metadata(result),
    }


def _repository_metadata(result: ReplayStageResult) -> Metadata:
    """Which checkout and commit the replay started from (or why it was refused)."""
    repository = result.repository
    if repository is None:
        return {}
    return {
        "repository": repository.path,
        "repository_status": repository.status,
        "repository_commit": repository.commit or "",
        "repository_reason": repository.reason or "",
        "files_from_repository": repository.files_from_repository,
    }


@dg.asset(
    partitions_def=trajectories,
    deps=["scan"],
    group_name="replay",
    kinds={"python"},
    backfill_policy=dg.BackfillPolicy.single_run(),
    code_version=REPLAY_CODE_VERSION,
    dagster_type=NOTHING,
    description="The session's files rebuilt before every shell command, with fidelity figures.",
)
def replay(
    context: dg.AssetExecutionContext, pipeline: PipelineResource
) -> Iterator[dg.Output | dg.AssetMaterialization]:
    workspace = pipeline.workspace()
    repositories = pipeline.settings().source.repositories
    figures = {}
    for key in context.partition_keys:
        result = replay_partition(workspace, key, repositories=repositories)
        figures[key] = PartitionFigures(metadata=_metadata(result), data_version=result.data_version)
    yield from partition_outputs(context.asset_key, figures)


def assets(families: Families) -> list[dg.AssetsDefinition]:
    return [replay]

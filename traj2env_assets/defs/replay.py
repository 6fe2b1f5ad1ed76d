"""Stage 3: replay every file change over a virtual filesystem (see traj2env_assets.replay)."""

import hashlib

import dagster as dg

from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import WorkspaceResource
from traj2env_assets.replay import REPLAY_CODE_VERSION, ReplayStageResult, replay_partition

_FIGURES = ("files_rebuilt", "files_lost", "edits_applied", "edits_failed", "unsafe_paths", "commands")


def _metadata(result: ReplayStageResult) -> dict[str, object]:
    figures = result.fidelity.model_dump() if result.fidelity else {}
    table = "| figure | value |\n|---|---|\n" + "\n".join(f"| {name} | {figures.get(name, 0)} |" for name in _FIGURES)
    return {
        "path": dg.MetadataValue.path(str(result.path)),
        "status": result.outcome.status,
        "cached": result.cached,
        "reason": result.outcome.reason or "",
        **{name: int(figures.get(name, 0)) for name in _FIGURES},
        "fidelity": dg.MetadataValue.md(table),
    }


@dg.asset(
    partitions_def=trajectories,
    deps=["scan_verdict"],
    group_name="replay",
    kinds={"python"},
    backfill_policy=dg.BackfillPolicy.single_run(),
    code_version=REPLAY_CODE_VERSION,
    description="The session's files rebuilt before every shell command, with fidelity figures.",
)
def replay_record(context: dg.AssetExecutionContext, workspace: WorkspaceResource) -> dg.MaterializeResult:
    ws = workspace.workspace()
    versions = []
    for key in context.partition_keys:
        result = replay_partition(ws, key)
        context.add_asset_metadata(_metadata(result), partition_key=key)
        versions.append(result.data_version)
    combined = hashlib.sha256("".join(versions).encode()).hexdigest()[:16]
    return dg.MaterializeResult(data_version=dg.DataVersion(combined))

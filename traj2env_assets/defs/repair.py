"""The repair family's assets: candidates, task images (with calibration), trials, published tasks."""

from pathlib import Path

import dagster as dg

from traj2env_assets.defs.docker import DOCKER_BUILD_POOL, DOCKER_TRIAL_POOL, DockerEngineResource
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.replay import replay_record
from traj2env_assets.defs.resources import PipelineResource, WorkspaceResource
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.repair.instruction import failure_excerpt
from traj2env_assets.families.repair.stage import (
    MINER_VERSION,
    CandidateProgress,
    active_candidates,
    for_each_candidate,
    mine_partition,
    prepare_candidate,
    publish_candidate,
    read_mining,
    read_progress,
    trial_candidate,
)
from traj2env_assets.formats.stage import read_conversion

# Docker stages run one trajectory per run, so retries, pools and UI status stay per trajectory.
PER_TRAJECTORY = dg.BackfillPolicy.multi_run(max_partitions_per_run=1)


def _engine(docker_engine: DockerEngineResource, pipeline: PipelineResource) -> DockerEngine:
    options = pipeline.options()
    return docker_engine.engine().model_copy(
        update={"platform": options.platform, "container_memory": options.container_memory}
    )


def _repair_enabled(pipeline: PipelineResource) -> bool:
    return "repair" in pipeline.options().families


def _progress_table(workspace, key: str, task_ids: list[str]) -> str:
    rows = []
    for task_id in task_ids:
        progress = read_progress(workspace, key, task_id)
        if progress is None:
            continue
        rewards = " ".join(f"{name}={reward:g}" for name, reward in progress.trial_rewards.items() if reward is not None)
        rows.append(f"| {task_id} | {progress.status} | {progress.reason or ''} | {rewards} |")
    return "| task | status | reason | trial rewards |\n|---|---|---|---|\n" + "\n".join(rows)


@dg.asset(
    partitions_def=trajectories,
    deps=[replay_record],
    group_name="repair",
    kinds={"python"},
    backfill_policy=dg.BackfillPolicy.single_run(),
    code_version=MINER_VERSION,
    description="Fail→pass check pairs with only file edits between, kept or dropped with a reason.",
)
def repair_candidates(
    context: dg.AssetExecutionContext, workspace: WorkspaceResource, pipeline: PipelineResource
) -> None:
    ws = workspace.workspace()
    enabled = _repair_enabled(pipeline)
    for key in context.partition_keys:
        if not enabled:
            context.add_asset_metadata({"status": "family disabled"}, partition_key=key)
            continue
        mining = mine_partition(ws, key)
        table = "| task | check | status | reason |\n|---|---|---|---|\n" + "\n".join(
            f"| {c.task_id} | `{c.check}` | {c.status} | {c.reason or ''} |" for c in mining.candidates
        )
        first_failure = next((c for c in mining.candidates if c.status == "candidate"), None)
        metadata = {
            "candidates": len(mining.candidates),
            "kept_for_build": sum(1 for c in mining.candidates if c.status == "candidate"),
            "skipped_reason": mining.skipped_reason or "",
            "cached": mining.cached,
            "candidate_table": dg.MetadataValue.md(table),
        }
        if first_failure is not None:
            metadata["failing_tests"] = dg.MetadataValue.md("\n".join(f"- `{i}`" for i in first_failure.failing_ids) or "none")
        context.add_asset_metadata(metadata, partition_key=key)


@dg.asset(
    partitions_def=trajectories,
    deps=[repair_candidates],
    group_name="repair",
    kinds={"docker"},
    pool=DOCKER_BUILD_POOL,
    backfill_policy=PER_TRAJECTORY,
    description="One image per candidate (content-hashed), and the check failing in it as recorded.",
)
def repair_task_images(
    context: dg.AssetExecutionContext,
    workspace: WorkspaceResource,
    pipeline: PipelineResource,
    docker_engine: DockerEngineResource,
) -> None:
    ws = workspace.workspace()
    config = pipeline.run_config()
    engine = _engine(docker_engine, pipeline)
    enabled = _repair_enabled(pipeline)
    pairs = [(key, task_id) for key in context.partition_keys for task_id in (active_candidates(ws, key) if enabled else [])]

    def prepare(key: str, task_id: str) -> CandidateProgress:
        conversion = read_conversion(ws, key)
        model = conversion.model_name if conversion else None
        return prepare_candidate(ws, key, task_id, engine, org=config.output.org, source_model=model)

    results = dict(zip(pairs, for_each_candidate(prepare, pairs, pipeline.options().jobs), strict=True))
    for key in context.partition_keys:
        mine = [(task_id, progress) for (k, task_id), progress in results.items() if k == key]
        excerpt = next(
            (failure_excerpt(p.calibration.output_tail) for _, p in mine if p.calibration is not None), ""
        )
        context.add_asset_metadata(
            {
                "candidates": len(mine),
                "images_built": sum(1 for _, p in mine if p.image_built),
                "images_reused": sum(1 for _, p in mine if p.image_built is False),
                "calibration_output": dg.MetadataValue.md(f"```\n{excerpt}\n```" if excerpt else "none"),
                "candidates_table": dg.MetadataValue.md(_progress_table(ws, key, [task_id for task_id, _ in mine])),
            },
            partition_key=key,
        )


@dg.asset(
    partitions_def=trajectories,
    deps=[repair_task_images],
    group_name="repair",
    kinds={"docker"},
    pool=DOCKER_TRIAL_POOL,
    backfill_policy=PER_TRAJECTORY,
    description="The control matrix per candidate: reference 1, noop / forge_reward / pytest_hook / tests_edit 0.",
)
def repair_trials(
    context: dg.AssetExecutionContext,
    workspace: WorkspaceResource,
    pipeline: PipelineResource,
    docker_engine: DockerEngineResource,
) -> None:
    ws = workspace.workspace()
    engine = _engine(docker_engine, pipeline)
    jobs = pipeline.options().jobs
    enabled = _repair_enabled(pipeline)
    pairs = [
        (key, task_id)
        for key in context.partition_keys
        for task_id in (active_candidates(ws, key) if enabled else [])
        if (progress := read_progress(ws, key, task_id)) and progress.status in ("calibrated", "trials_passed", "published")
    ]
    # Candidates run side by side; a lone candidate runs its controls side by side instead.
    parallelism = jobs if len(pairs) == 1 else 1
    ran = dict(
        zip(
            pairs,
            for_each_candidate(
                lambda key, task_id: trial_candidate(ws, key, task_id, engine, parallelism=parallelism)[1], pairs, jobs
            ),
            strict=True,
        )
    )
    for key in context.partition_keys:
        mine = [task_id for (k, task_id) in ran if k == key]
        runs = sum(1 for (k, _), did_run in ran.items() if k == key and did_run)
        context.add_asset_metadata(
            {
                "candidates_tried": len(mine),
                "trial_matrices_run": runs,
                "trial_matrices_reused": len(mine) - runs,
                "trial_matrix": dg.MetadataValue.md(_progress_table(ws, key, mine)),
            },
            partition_key=key,
        )


@dg.asset(
    partitions_def=trajectories,
    deps=[repair_trials],
    group_name="repair",
    kinds={"harbor"},
    backfill_policy=dg.BackfillPolicy.single_run(),
    description="Tasks whose controls all passed, moved atomically into <destination>/<task-id>/.",
)
def published_repair_tasks(
    context: dg.AssetExecutionContext, workspace: WorkspaceResource, pipeline: PipelineResource
) -> None:
    ws = workspace.workspace()
    destination = Path(pipeline.run_config().output.destination).resolve()
    for key in context.partition_keys:
        mining = read_mining(ws, key)
        task_ids = [c.task_id for c in mining.candidates] if mining else []
        published = []
        for task_id in task_ids:
            progress = read_progress(ws, key, task_id)
            if progress and progress.status in ("trials_passed", "published"):
                published.append(publish_candidate(ws, key, task_id, destination))
        context.add_asset_metadata(
            {
                "published": sum(1 for p in published if p.status == "published"),
                "duplicates": sum(1 for p in published if p.reason == "duplicate"),
                "destination": dg.MetadataValue.path(str(destination)),
                "tasks": dg.MetadataValue.md(_progress_table(ws, key, task_ids)),
            },
            partition_key=key,
        )

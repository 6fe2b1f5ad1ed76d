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
    mine_partition,
    prepare_partitions,
    progress_table,
    publish_partition,
    trial_partitions,
)

# Docker stages run one trajectory per run, so retries, pools and UI status stay per trajectory.
PER_TRAJECTORY = dg.BackfillPolicy.multi_run(max_partitions_per_run=1)


def _engine(docker_engine: DockerEngineResource, pipeline: PipelineResource) -> DockerEngine:
    options = pipeline.options()
    return docker_engine.engine().model_copy(
        update={"platform": options.platform, "container_memory": options.container_memory}
    )


def _keys(context: dg.AssetExecutionContext, pipeline: PipelineResource) -> list[str]:
    """The run's partitions, or none when the repair family is not selected."""
    return list(context.partition_keys) if "repair" in pipeline.options().families else []


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
    for key in _keys(context, pipeline):
        mining = mine_partition(ws, key)
        failing = next((c.failing_ids for c in mining.candidates if c.status == "candidate"), [])
        context.add_asset_metadata(
            {
                "candidates": len(mining.candidates),
                "kept_for_build": sum(1 for c in mining.candidates if c.status == "candidate"),
                "skipped_reason": mining.skipped_reason or "",
                "cached": mining.cached,
                "candidate_table": dg.MetadataValue.md(progress_table(ws, key)),
                "failing_tests": dg.MetadataValue.md("\n".join(f"- `{i}`" for i in failing) or "none"),
            },
            partition_key=key,
        )


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
    options, org = pipeline.options(), pipeline.run_config().output.org
    prepared = prepare_partitions(ws, _keys(context, pipeline), _engine(docker_engine, pipeline), jobs=options.jobs, org=org)
    for key, progresses in prepared.items():
        excerpt = next((failure_excerpt(p.calibration.output_tail) for p in progresses if p.calibration), "")
        context.add_asset_metadata(
            {
                "candidates": len(progresses),
                "images_built": sum(1 for p in progresses if p.image_built),
                "images_reused": sum(1 for p in progresses if p.image_built is False),
                "calibration_output": dg.MetadataValue.md(f"```\n{excerpt}\n```" if excerpt else "none"),
                "candidate_table": dg.MetadataValue.md(progress_table(ws, key)),
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
    tried = trial_partitions(ws, _keys(context, pipeline), _engine(docker_engine, pipeline), jobs=pipeline.options().jobs)
    for key, results in tried.items():
        ran = sum(1 for _, did_run in results if did_run)
        context.add_asset_metadata(
            {
                "candidates_tried": len(results),
                "trial_matrices_run": ran,
                "trial_matrices_reused": len(results) - ran,
                "trial_matrix": dg.MetadataValue.md(progress_table(ws, key)),
            },
            partition_key=key,
        )


@dg.asset(
    partitions_def=trajectories,
    deps=[repair_trials],
    group_name="repair",
    kinds={"harbor"},
    backfill_policy=PER_TRAJECTORY,
    description="Tasks whose controls all passed, moved atomically into <destination>/<task-id>/.",
)
def published_repair_tasks(
    context: dg.AssetExecutionContext, workspace: WorkspaceResource, pipeline: PipelineResource
) -> None:
    ws = workspace.workspace()
    destination = Path(pipeline.run_config().output.destination).resolve()
    for key in _keys(context, pipeline):
        published = publish_partition(ws, key, destination)
        context.add_asset_metadata(
            {
                "published": sum(1 for p in published if p.status == "published"),
                "duplicates": sum(1 for p in published if p.reason == "duplicate"),
                "destination": dg.MetadataValue.path(str(destination)),
                "tasks": dg.MetadataValue.md(progress_table(ws, key)),
            },
            partition_key=key,
        )

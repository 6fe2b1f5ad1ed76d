"""Stages 6-8 as graph-backed assets: ``task_images``, ``calibration``, ``trials``.

Each is three ops: ``<stage>_plan`` decides every candidate whose work is cached (no
build, no container) and emits the others as dynamic outputs; ``<stage>_candidate``
does one candidate's Docker work, in the stage's pool and with the Docker retry
policy, so a run shows one step per candidate with its own logs and metadata;
``<stage>_summary`` settles the candidates that shared a key with one that ran (the plan
emits one candidate per key) and records each partition's per-candidate table. A warm rerun emits
nothing and runs no Docker step. ``propose_only`` is applied here: no plan emits work.
"""

from collections.abc import Callable, Iterator
from typing import NamedTuple

import dagster as dg

from traj2env_assets.defs.docker import DOCKER_RETRY, DockerEngineResource, matrix_metadata, permanent_unless_transient
from traj2env_assets.defs.interrupts import interrupts_not_retried
from traj2env_assets.defs.materialize import Metadata, partition_outputs
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.pools import DOCKER_BUILD_POOL, DOCKER_TRIAL_POOL
from traj2env_assets.defs.proposals import PROPOSALS_ASSET
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.defs.stages import PER_TRAJECTORY, partition_statuses_of, stage_partition_figures
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import Family
from traj2env_assets.families.registry import Families
from traj2env_assets.lifecycle.calibration import calibrate_candidate, plan_calibration
from traj2env_assets.lifecycle.images import build_candidate_image, plan_images
from traj2env_assets.lifecycle.status import CandidateRef, CandidateStatus, Stage
from traj2env_assets.lifecycle.trials import plan_trials, run_candidate_trials
from traj2env_assets.verification.trial import MatrixResult

# Candidate refs pass between the ops of one run in memory: nothing is pickled to disk.
REFS_IO_MANAGER = "candidate_refs"

Plan = Callable[[PipelineResource, DockerEngineResource, Families, list[CandidateStatus]], list[CandidateRef]]
Work = Callable[[PipelineResource, DockerEngine, Family, CandidateRef], CandidateStatus]
WorkMetadata = Callable[[CandidateStatus], Metadata]


class DockerStage(NamedTuple):
    name: str
    upstream: str
    stage: Stage
    pool: str
    group: str
    description: str
    plan: Plan
    work: Work
    work_metadata: WorkMetadata


def docker_stage_asset(spec: DockerStage) -> dg.AssetsDefinition:
    @dg.op(
        name=f"{spec.name}_plan",
        ins={"after": dg.In(dg.Nothing)},
        out=dg.DynamicOut(CandidateRef, io_manager_key=REFS_IO_MANAGER),
    )
    def plan(
        context: dg.OpExecutionContext,
        pipeline: PipelineResource,
        docker_engine: DockerEngineResource,
        families: dg.ResourceParam[Families],
    ) -> Iterator[dg.DynamicOutput[CandidateRef]]:
        if pipeline.options().propose_only:
            context.log.info("propose_only: no Docker work")
            return
        statuses = [s for key in context.partition_keys for s in partition_statuses_of(pipeline, families, key)]
        for ref in spec.plan(pipeline, docker_engine, families, statuses):
            yield dg.DynamicOutput(ref, mapping_key=ref.mapping_key)

    @dg.op(
        name=f"{spec.name}_candidate",
        pool=spec.pool,
        retry_policy=DOCKER_RETRY,
        out=dg.Out(CandidateRef, io_manager_key=REFS_IO_MANAGER),
    )
    def work(
        context: dg.OpExecutionContext,
        ref: CandidateRef,
        pipeline: PipelineResource,
        docker_engine: DockerEngineResource,
        families: dg.ResourceParam[Families],
    ) -> CandidateRef:
        with interrupts_not_retried():
            try:
                status = spec.work(pipeline, docker_engine.engine(context.run), families.by_name(ref.family), ref)
            except Exception as error:
                raise permanent_unless_transient(error) from error
        context.log.info(f"{ref.family} {ref.task_id}: {status.state} {status.drop.reason if status.drop else ''}")
        context.add_output_metadata({"state": status.state, **spec.work_metadata(status)})
        return ref

    @dg.op(
        name=f"{spec.name}_summary",
        ins={"done": dg.In(list[CandidateRef], input_manager_key=REFS_IO_MANAGER)},
        out=dg.Out(dg.Nothing),
    )
    def summary(
        context: dg.OpExecutionContext,
        done: list[CandidateRef],
        pipeline: PipelineResource,
        docker_engine: DockerEngineResource,
        families: dg.ResourceParam[Families],
    ) -> Iterator[dg.Output | dg.AssetMaterialization]:
        worked = set(done)
        if not pipeline.options().propose_only:
            # Candidates that shared a key with one that just ran are decided on its results;
            # those that ran keep the record their own step wrote (it says what was built).
            statuses = [
                s
                for key in context.partition_keys
                for s in partition_statuses_of(pipeline, families, key)
                if s.ref not in worked
            ]
            if waiting := spec.plan(pipeline, docker_engine, families, statuses):
                context.log.warning(f"{spec.name}: still waiting: {[ref.task_id for ref in waiting]}")

        def docker_steps(statuses: list[CandidateStatus]) -> Metadata:
            return {"docker_steps": sum(1 for status in statuses if status.ref in worked)}

        keys = list(context.partition_keys)
        figures, common = stage_partition_figures(pipeline, families, keys, spec.stage, docker_steps)
        yield from partition_outputs(dg.AssetKey(spec.name), figures, common)

    @dg.graph_asset(
        name=spec.name,
        ins={"after": dg.AssetIn(key=spec.upstream, dagster_type=dg.Nothing)},
        partitions_def=trajectories,
        group_name=spec.group,
        kinds={"docker"},
        backfill_policy=PER_TRAJECTORY,
        description=spec.description,
    )
    def stage_asset(after: None) -> None:
        return summary(plan(after=after).map(work).collect())

    return stage_asset


def _org(pipeline: PipelineResource) -> str:
    return pipeline.settings().output.org


def _plan_images(
    pipeline: PipelineResource, docker: DockerEngineResource, families: Families, statuses: list[CandidateStatus]
) -> list[CandidateRef]:
    return plan_images(pipeline.workspace(), families, docker.engine(), statuses, _org(pipeline))[1]


def _build(pipeline: PipelineResource, engine: DockerEngine, family: Family, ref: CandidateRef) -> CandidateStatus:
    # The staged task holds everything the build needs: no family code runs here.
    return build_candidate_image(pipeline.workspace(), engine, ref)


def _plan_calibration(
    pipeline: PipelineResource, docker: DockerEngineResource, families: Families, statuses: list[CandidateStatus]
) -> list[CandidateRef]:
    return plan_calibration(pipeline.workspace(), families, statuses, _org(pipeline))[1]


def _calibrate(pipeline: PipelineResource, engine: DockerEngine, family: Family, ref: CandidateRef) -> CandidateStatus:
    # The docker_trial pool's one slot runs ``jobs`` containers at once: a candidate's probes
    # side by side as its trials are.
    workspace, jobs = pipeline.workspace(), pipeline.options().jobs
    return calibrate_candidate(workspace, family, engine, ref, _org(pipeline), parallelism=jobs)


def _plan_trials(
    pipeline: PipelineResource, docker: DockerEngineResource, families: Families, statuses: list[CandidateStatus]
) -> list[CandidateRef]:
    return plan_trials(pipeline.workspace(), families, statuses)[1]


def _trial(pipeline: PipelineResource, engine: DockerEngine, family: Family, ref: CandidateRef) -> CandidateStatus:
    return run_candidate_trials(pipeline.workspace(), family, engine, ref, parallelism=pipeline.options().jobs)


def _image_metadata(status: CandidateStatus) -> Metadata:
    image = status.image
    return {"image": image.tag or "", "built": bool(image.built), "seconds": image.seconds or 0.0} if image else {}


def _calibration_metadata(status: CandidateStatus) -> Metadata:
    return {"facts": dg.MetadataValue.json(status.calibration.facts)} if status.calibration else {}


def _trials_metadata(status: CandidateStatus) -> Metadata:
    if status.trials is None:
        return {}
    with open(status.trials.file, encoding="utf-8") as handle:
        return matrix_metadata(MatrixResult.model_validate_json(handle.read()))


task_images = docker_stage_asset(
    DockerStage(
        name="task_images",
        upstream=PROPOSALS_ASSET,
        stage="image",
        pool=DOCKER_BUILD_POOL,
        group="environment",
        description="Each candidate's Harbor task staged privately, and one environment image per "
        "candidate (tagged by content hash; an identical context is never rebuilt).",
        plan=_plan_images,
        work=_build,
        work_metadata=_image_metadata,
    )
)
calibration = docker_stage_asset(
    DockerStage(
        name="calibration",
        upstream="task_images",
        stage="calibration",
        pool=DOCKER_TRIAL_POOL,
        group="environment",
        description="The family's probes in each candidate's image, networking off (repair: the "
        "recorded check fails as recorded).",
        plan=_plan_calibration,
        work=_calibrate,
        work_metadata=_calibration_metadata,
    )
)
trials = docker_stage_asset(
    DockerStage(
        name="trials",
        upstream="calibration",
        stage="trials",
        pool=DOCKER_TRIAL_POOL,
        group="trials",
        description="The family's control matrix per candidate, networking off: the reference "
        "scores full reward, every other control 0.",
        plan=_plan_trials,
        work=_trial,
        work_metadata=_trials_metadata,
    )
)

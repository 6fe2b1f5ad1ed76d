"""The factory of the Docker stages' graph-backed assets (``images``, ``calibration``, ``trials``;
each stage's ``asset.py`` hands it a :class:`DockerStage`).

Each is three ops: ``<stage>_plan`` decides every candidate whose work is cached (no
build, no container) and emits the others as dynamic outputs; ``<stage>_candidate``
does one candidate's Docker work, in the stage's pool and with the Docker retry
policy, so a run shows one step per candidate with its own logs and metadata;
``<stage>_summary`` settles the candidates that shared a key with one that ran (the plan
emits one candidate per key) and records each partition's per-candidate table. A stage
with a second wave (``trials``: a hider's matrix after its shower's) has two more ops:
``<stage>_deferred_plan`` plans what the first plan left waiting once the first wave's
steps are done, and ``<stage>_deferred_candidate`` works on it. A warm rerun emits
nothing and runs no Docker step. ``propose_only`` is applied here: no plan emits work.
"""

from collections.abc import Callable, Iterator
from typing import NamedTuple

import dagster as dg

from traj2env_assets.defs.candidate_stages import PER_TRAJECTORY, partition_statuses_of, stage_partition_figures
from traj2env_assets.defs.docker import DOCKER_RETRY, DockerEngineResource, permanent_unless_transient
from traj2env_assets.defs.interrupts import interrupts_not_retried
from traj2env_assets.defs.materialize import Metadata, partition_outputs
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import Family
from traj2env_assets.families.registry import Families
from traj2env_assets.lifecycle.status import CandidateRef, CandidateStatus, Stage

# Candidate refs pass between the ops of one run in memory: nothing is pickled to disk.
REFS_IO_MANAGER = "candidate_refs"

Plan = Callable[
    [PipelineResource, DockerEngineResource, Families, list[CandidateStatus], frozenset[CandidateRef]],
    list[CandidateRef],
]
"""Decides what it can without Docker work and returns the candidates to work on; it gets
every candidate of the run's partitions and those whose step already ran in this run."""
UnsettledPlan = Callable[[PipelineResource, DockerEngineResource, Families, list[CandidateStatus]], list[CandidateRef]]
Work = Callable[[PipelineResource, DockerEngine, Family, CandidateRef], CandidateStatus]
WorkMetadata = Callable[[CandidateStatus], Metadata]


class DockerStage(NamedTuple):
    stage: Stage
    """The stage, its asset's key and the prefix of its ops' names."""
    upstream: str
    pool: str
    group: str
    description: str
    plan: Plan
    work: Work
    work_metadata: WorkMetadata
    plan_deferred: Plan | None = None
    """The second wave's plan, after the first wave's steps: what ``plan`` left waiting. It
    also settles the stage in the summary."""


def docker_stage_asset(spec: DockerStage) -> dg.AssetsDefinition:
    @dg.op(
        name=f"{spec.stage}_plan",
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
        statuses = _run_statuses(context, pipeline, families)
        for ref in spec.plan(pipeline, docker_engine, families, statuses, frozenset()):
            yield dg.DynamicOutput(ref, mapping_key=ref.mapping_key)

    @dg.op(
        name=f"{spec.stage}_deferred_plan",
        ins={"done": dg.In(list[CandidateRef], input_manager_key=REFS_IO_MANAGER)},
        out=dg.DynamicOut(CandidateRef, io_manager_key=REFS_IO_MANAGER),
    )
    def deferred_plan(
        context: dg.OpExecutionContext,
        done: list[CandidateRef],
        pipeline: PipelineResource,
        docker_engine: DockerEngineResource,
        families: dg.ResourceParam[Families],
    ) -> Iterator[dg.DynamicOutput[CandidateRef]]:
        assert spec.plan_deferred is not None  # the op is in the graph only then
        if pipeline.options().propose_only:
            return
        statuses = _run_statuses(context, pipeline, families)
        for ref in spec.plan_deferred(pipeline, docker_engine, families, statuses, frozenset(done)):
            yield dg.DynamicOutput(ref, mapping_key=ref.mapping_key)

    @dg.op(
        name=f"{spec.stage}_candidate",
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

    waves = ("done", "deferred_done") if spec.plan_deferred is not None else ("done",)

    @dg.op(
        name=f"{spec.stage}_summary",
        ins={wave: dg.In(list[CandidateRef], input_manager_key=REFS_IO_MANAGER) for wave in waves},
        out=dg.Out(dg.Nothing),
    )
    def summary(
        context: dg.OpExecutionContext,
        pipeline: PipelineResource,
        docker_engine: DockerEngineResource,
        families: dg.ResourceParam[Families],
        **done: list[CandidateRef],
    ) -> Iterator[dg.Output | dg.AssetMaterialization]:
        worked = frozenset(ref for wave in done.values() for ref in wave)
        if not pipeline.options().propose_only:
            # Candidates that shared a key with one that just ran are decided on its results;
            # those that ran keep the record their own step wrote (it says what was built).
            settle = spec.plan_deferred or spec.plan
            if waiting := settle(pipeline, docker_engine, families, _run_statuses(context, pipeline, families), worked):
                context.log.warning(f"{spec.stage}: still waiting: {[ref.task_id for ref in waiting]}")

        def docker_steps(statuses: list[CandidateStatus]) -> Metadata:
            return {"docker_steps": sum(1 for status in statuses if status.ref in worked)}

        keys = list(context.partition_keys)
        figures, common = stage_partition_figures(pipeline, families, keys, spec.stage, docker_steps)
        yield from partition_outputs(dg.AssetKey(spec.stage), figures, common)

    @dg.graph_asset(
        name=spec.stage,
        ins={"after": dg.AssetIn(key=spec.upstream, dagster_type=dg.Nothing)},
        partitions_def=trajectories,
        group_name=spec.group,
        kinds={"docker"},
        backfill_policy=PER_TRAJECTORY,
        description=spec.description,
    )
    def stage_asset(after: None) -> None:
        done = plan(after=after).map(work).collect()
        if spec.plan_deferred is None:
            return summary(done=done)
        deferred_done = deferred_plan(done=done).map(work.alias(f"{spec.stage}_deferred_candidate")).collect()
        return summary(done=done, deferred_done=deferred_done)

    return stage_asset


def _run_statuses(
    context: dg.OpExecutionContext, pipeline: PipelineResource, families: Families
) -> list[CandidateStatus]:
    """Every candidate of the run's partitions, as its status file has it now."""
    return [status for key in context.partition_keys for status in partition_statuses_of(pipeline, families, key)]


def on_unsettled(plan: UnsettledPlan) -> Plan:
    """A plan that needs only the candidates whose step has not run in this run."""

    def planned(
        pipeline: PipelineResource,
        docker: DockerEngineResource,
        families: Families,
        statuses: list[CandidateStatus],
        settled: frozenset[CandidateRef],
    ) -> list[CandidateRef]:
        return plan(pipeline, docker, families, [status for status in statuses if status.ref not in settled])

    return planned

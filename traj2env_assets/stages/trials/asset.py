"""Stage 8, ``trials``: the family's control matrix per candidate (a graph-backed asset: an
op per candidate whose matrix is not cached, pool ``docker_trial``; a candidate that hides
a test another shows runs in the second wave, after the shower's matrix)."""

import dagster as dg

from traj2env_assets.defs.docker import DockerEngineResource, matrix_metadata
from traj2env_assets.defs.docker_stages import DockerStage, Plan, docker_stage_asset
from traj2env_assets.defs.materialize import Metadata
from traj2env_assets.defs.pools import DOCKER_TRIAL_POOL
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import Family
from traj2env_assets.families.registry import Families
from traj2env_assets.lifecycle.status import CandidateRef, CandidateStatus
from traj2env_assets.stages.trials.trials import plan_trials, run_candidate_trials
from traj2env_assets.verification.trial import MatrixResult


def _trials_plan(may_defer: bool) -> Plan:
    """The first wave's plan (``may_defer``) leaves a hider whose shower has no verdict yet
    for the second wave's."""

    def plan(
        pipeline: PipelineResource,
        docker: DockerEngineResource,
        families: Families,
        statuses: list[CandidateStatus],
        settled: frozenset[CandidateRef],
    ) -> list[CandidateRef]:
        destination = pipeline.settings().output.destination
        return plan_trials(pipeline.workspace(), families, statuses, destination, settled, may_defer)[1]

    return plan


def _trial(pipeline: PipelineResource, engine: DockerEngine, family: Family, ref: CandidateRef) -> CandidateStatus:
    return run_candidate_trials(pipeline.workspace(), family, engine, ref, parallelism=pipeline.options().jobs)


def _trials_metadata(status: CandidateStatus) -> Metadata:
    if status.trials is None:
        return {}
    with open(status.trials.file, encoding="utf-8") as handle:
        return matrix_metadata(MatrixResult.model_validate_json(handle.read()))


trials = docker_stage_asset(
    DockerStage(
        stage="trials",
        upstream="calibration",
        pool=DOCKER_TRIAL_POOL,
        group="trials",
        description="The family's control matrix per candidate, networking off: the reference "
        "scores full reward, every other control 0.",
        plan=_trials_plan(may_defer=True),
        work=_trial,
        work_metadata=_trials_metadata,
        plan_deferred=_trials_plan(may_defer=False),
    )
)


def assets(families: Families) -> list[dg.AssetsDefinition]:
    return [trials]

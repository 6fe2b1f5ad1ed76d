"""Stage 8, ``trials``: the family's control matrix per candidate (a graph-backed asset: an
op per candidate whose matrix is not cached, pool ``docker_trial``)."""

import dagster as dg

from traj2env_assets.defs.docker import DockerEngineResource, matrix_metadata
from traj2env_assets.defs.docker_stages import DockerStage, docker_stage_asset
from traj2env_assets.defs.materialize import Metadata
from traj2env_assets.defs.pools import DOCKER_TRIAL_POOL
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import Family
from traj2env_assets.families.registry import Families
from traj2env_assets.lifecycle.status import CandidateRef, CandidateStatus
from traj2env_assets.stages.trials.trials import plan_trials, run_candidate_trials
from traj2env_assets.verification.trial import MatrixResult


def _plan_trials(
    pipeline: PipelineResource, docker: DockerEngineResource, families: Families, statuses: list[CandidateStatus]
) -> list[CandidateRef]:
    return plan_trials(pipeline.workspace(), families, statuses)[1]


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
        plan=_plan_trials,
        work=_trial,
        work_metadata=_trials_metadata,
    )
)


def assets(families: Families) -> list[dg.AssetsDefinition]:
    return [trials]

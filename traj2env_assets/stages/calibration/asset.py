"""Stage 7, ``calibration``: the family's probes in each candidate's image (a graph-backed
asset: an op per candidate whose calibration is not cached, pool ``docker_trial``)."""

import dagster as dg

from traj2env_assets.defs.docker import DockerEngineResource
from traj2env_assets.defs.docker_stages import DockerStage, docker_stage_asset, on_unsettled
from traj2env_assets.defs.materialize import Metadata
from traj2env_assets.defs.pools import DOCKER_TRIAL_POOL
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import Family
from traj2env_assets.families.registry import Families
from traj2env_assets.lifecycle.status import CandidateRef, CandidateStatus
from traj2env_assets.stages.calibration.calibration import calibrate_candidate, plan_calibration


def _plan_calibration(
    pipeline: PipelineResource, docker: DockerEngineResource, families: Families, statuses: list[CandidateStatus]
) -> list[CandidateRef]:
    return plan_calibration(pipeline.workspace(), families, statuses, pipeline.settings().output.org)[1]


def _calibrate(pipeline: PipelineResource, engine: DockerEngine, family: Family, ref: CandidateRef) -> CandidateStatus:
    # The docker_trial pool's one slot runs ``jobs`` containers at once: a candidate's probes
    # side by side as its trials are.
    workspace, jobs, org = pipeline.workspace(), pipeline.options().jobs, pipeline.settings().output.org
    return calibrate_candidate(workspace, family, engine, ref, org, parallelism=jobs)


def _calibration_metadata(status: CandidateStatus) -> Metadata:
    return {"facts": dg.MetadataValue.json(status.calibration.facts)} if status.calibration else {}


calibration = docker_stage_asset(
    DockerStage(
        stage="calibration",
        upstream="images",
        pool=DOCKER_TRIAL_POOL,
        group="environment",
        description="The family's probes in each candidate's image, networking off (repair: the "
        "recorded check fails as recorded).",
        plan=on_unsettled(_plan_calibration),
        work=_calibrate,
        work_metadata=_calibration_metadata,
    )
)


def assets(families: Families) -> list[dg.AssetsDefinition]:
    return [calibration]

"""Stage 6, ``images``: each candidate's Harbor task staged, and its environment image built
(a graph-backed asset: an op per candidate whose image is not cached, pool ``docker_build``)."""

import dagster as dg

from traj2env_assets.defs.docker import DockerEngineResource
from traj2env_assets.defs.docker_stages import DockerStage, docker_stage_asset, on_unsettled
from traj2env_assets.defs.materialize import Metadata
from traj2env_assets.defs.pools import DOCKER_BUILD_POOL
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import Family
from traj2env_assets.families.registry import Families
from traj2env_assets.lifecycle.status import CandidateRef, CandidateStatus
from traj2env_assets.stages.images.images import build_candidate_image, plan_images


def _plan_images(
    pipeline: PipelineResource, docker: DockerEngineResource, families: Families, statuses: list[CandidateStatus]
) -> list[CandidateRef]:
    org = pipeline.settings().output.org
    return plan_images(pipeline.workspace(), families, docker.engine(), statuses, org)[1]


def _build(pipeline: PipelineResource, engine: DockerEngine, family: Family, ref: CandidateRef) -> CandidateStatus:
    # The staged task holds everything the build needs: no family code runs here.
    return build_candidate_image(pipeline.workspace(), engine, ref)


def _image_metadata(status: CandidateStatus) -> Metadata:
    image = status.image
    return {"image": image.tag or "", "built": bool(image.built), "seconds": image.seconds or 0.0} if image else {}


images = docker_stage_asset(
    DockerStage(
        stage="images",
        upstream="proposals",
        pool=DOCKER_BUILD_POOL,
        group="environment",
        description="Each candidate's Harbor task staged privately, and one environment image per "
        "candidate (tagged by content hash; an identical context is never rebuilt).",
        plan=on_unsettled(_plan_images),
        work=_build,
        work_metadata=_image_metadata,
    )
)


def assets(families: Families) -> list[dg.AssetsDefinition]:
    return [images]

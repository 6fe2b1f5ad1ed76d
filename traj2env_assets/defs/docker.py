"""The Docker engine as a Dagster resource, and the ``base_images`` asset.

Resource key ``docker_engine``. Assets that build images take ``pool=DOCKER_BUILD_POOL``;
assets that run calibration or trials take ``pool=DOCKER_TRIAL_POOL`` (limits are set
per deployment: ``dagster instance concurrency set docker_trial 2``).

dagster-docker is not used for this work: its ``PipesDockerClient`` has no timeout and
never removes the container, ``execute_docker_container`` names containers per step so
two trials in one step collide, and it does not build images at all. Trials need a
wall-clock limit, ``network_mode=none``, copy-out of one path and guaranteed removal,
which ``traj2env_assets.docker_engine`` provides. dagster-docker's
``DockerRunLauncher`` remains the right tool for running Dagster runs in containers.
"""

from __future__ import annotations

import dagster as dg

from traj2env_assets.config import PipelineOptions
from traj2env_assets.docker_engine.base_images import DEBIAN_MIRROR, BaseImageOutcome
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.trial import MatrixResult

DOCKER_BUILD_POOL = "docker_build"
DOCKER_TRIAL_POOL = "docker_trial"


class DockerEngineResource(dg.ConfigurableResource):
    """The pipeline's Docker options; ``engine()`` gives the dagster-free core object."""

    platform: str = "linux/amd64"
    container_memory: str = "4g"
    trial_cpus: float = 1.0
    pids_limit: int = 512
    build_timeout_s: float = 900
    agent_timeout_s: float = 600
    verifier_timeout_s: float = 600
    debian_mirror: str = DEBIAN_MIRROR

    @classmethod
    def from_options(cls, options: PipelineOptions) -> DockerEngineResource:
        return cls(platform=options.platform, container_memory=options.container_memory)

    def engine(self) -> DockerEngine:
        return DockerEngine(
            platform=self.platform,
            container_memory=self.container_memory,
            trial_cpus=self.trial_cpus,
            pids_limit=self.pids_limit,
            build_timeout_s=self.build_timeout_s,
            agent_timeout_s=self.agent_timeout_s,
            verifier_timeout_s=self.verifier_timeout_s,
            debian_mirror=self.debian_mirror,
        )


def matrix_metadata(matrix: MatrixResult) -> dict[str, dg.RawMetadataValue]:
    """Metadata for an asset that ran a trial matrix: one reward per control (-1 when the
    verifier produced none) and a table."""
    rows = "\n".join(
        f"| {r.control} | {r.expected_reward:g} | {r.reward} | {'yes' if r.passed else 'NO'} | "
        f"{(r.verdict or {}).get('reason', '')} |"
        for r in matrix.results
    )
    table = "| control | expected | reward | passed | reason |\n|---|---|---|---|---|\n" + rows
    return {
        "controls_passed": matrix.passed,
        "matrix_seconds": matrix.seconds,
        **{f"reward_{r.control}": r.reward if r.reward is not None else -1.0 for r in matrix.results},
        "controls": dg.MetadataValue.md(table),
    }


def _table(outcomes: list[BaseImageOutcome]) -> str:
    rows = "\n".join(
        f"| {o.name} | {o.status} | {o.version} | {o.seconds:.1f} |" for o in outcomes
    )
    return "| image | status | version | seconds |\n|---|---|---|---|\n" + rows


@dg.asset(
    group_name="environment",
    kinds={"docker"},
    pool=DOCKER_BUILD_POOL,
    description="The base images task Dockerfiles start FROM: found, pulled, or built from Debian.",
)
def base_images(docker_engine: DockerEngineResource) -> dg.MaterializeResult:
    outcomes = docker_engine.engine().ensure_bases()
    return dg.MaterializeResult(
        metadata={
            **{status: [o.name for o in outcomes if o.status == status]
               for status in ("found", "pulled", "built")},
            "images": dg.MetadataValue.md(_table(outcomes)),
        }
    )

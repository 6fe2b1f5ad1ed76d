"""The Docker engine as a Dagster resource, the ``base_images`` asset, and the Docker ops' retry policy.

Resource key ``docker_engine``. Its engine takes ``platform`` and ``container_memory``
from the run's options (the ``pipeline`` resource); the other fields tune the engine.

dagster-docker is not used for this work: its ``PipesDockerClient`` has no timeout and
never removes the container, ``execute_docker_container`` names containers per step so
two trials in one step collide, and it does not build images at all. Trials need a
wall-clock limit, ``network_mode=none``, copy-out of one path and guaranteed removal,
which ``traj2env_assets.docker_engine`` provides. dagster-docker's
``DockerRunLauncher`` remains the right tool for running Dagster runs in containers.
"""

from __future__ import annotations

import dagster as dg

from traj2env_assets.defs.materialize import Metadata
from traj2env_assets.defs.pools import DOCKER_BUILD_POOL
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.defs.run_liveness import RUN_LOCK_TAG
from traj2env_assets.docker_engine.base_images import DEBIAN_MIRROR, BaseImageOutcome
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.errors import is_transient_engine_error
from traj2env_assets.docker_engine.labels import run_labels
from traj2env_assets.verification.trial import MatrixResult

# A transient engine error (unreachable, 5xx) retries the candidate's step after 5 s,
# then 10 s; anything else fails it at once (see ``permanent_unless_transient``).
DOCKER_RETRY = dg.RetryPolicy(max_retries=2, delay=5, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS)


class DockerEngineResource(dg.ConfigurableResource):
    pipeline: PipelineResource
    trial_cpus: float = 1.0
    pids_limit: int = 512
    build_timeout_s: float = 900
    agent_timeout_s: float = 600
    verifier_timeout_s: float = 600
    debian_mirror: str = DEBIAN_MIRROR
    container_labels: dict[str, str] = {}  # noqa: RUF012 - a pydantic field: each instance gets a copy

    def engine(self, run: dg.DagsterRun | None = None) -> DockerEngine:
        """The engine; given the run its containers work for, they carry its labels."""
        options = self.pipeline.options()
        labels = dict(self.container_labels)
        if run is not None:
            labels.update(run_labels(run.run_id, run.tags.get(RUN_LOCK_TAG)))
        return DockerEngine(
            platform=options.platform,
            container_memory=options.container_memory,
            trial_cpus=self.trial_cpus,
            pids_limit=self.pids_limit,
            build_timeout_s=self.build_timeout_s,
            agent_timeout_s=self.agent_timeout_s,
            verifier_timeout_s=self.verifier_timeout_s,
            debian_mirror=self.debian_mirror,
            container_labels=labels,
        )


def permanent_unless_transient(error: Exception) -> Exception:
    """The exception to raise from a Docker op: transient errors as they are (the retry
    policy retries them), anything else as a failure that is not retried."""
    if is_transient_engine_error(error):
        return error
    return dg.Failure(description=f"{type(error).__name__}: {error}", allow_retries=False)


def matrix_metadata(matrix: MatrixResult) -> Metadata:
    """Metadata for a step that ran a trial matrix: one reward per control (-1 when the
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
    rows = "\n".join(f"| {o.name} | {o.status} | {o.version} | {o.seconds:.1f} |" for o in outcomes)
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
            **{status: [o.name for o in outcomes if o.status == status] for status in ("found", "pulled", "built")},
            "images": dg.MetadataValue.md(_table(outcomes)),
        }
    )

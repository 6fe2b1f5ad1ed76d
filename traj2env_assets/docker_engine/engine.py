"""``DockerEngine``: the one object the image, calibration and trial stages talk to.

It holds the connection and the pipeline's Docker options (``platform``,
``container_memory``, the trial limits and timeouts) and exposes base images, builds,
pruning and the settings of a trial's containers. The Dagster resource ``docker_engine``
(``traj2env_assets.defs.docker``) builds one of these. Trials themselves are
verification (``traj2env_assets.verification.trial``), run on the engine's client.

Usage for a family (the repair family, for example)::

    from traj2env_assets.docker_engine.engine import DockerEngine
    from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec
    from traj2env_assets.harbor.writer import write_task
    from traj2env_assets.verification.trial import TrialTask, run_matrix

    engine = DockerEngine(container_memory="4g")             # the task images' platform
    task = write_task(TaskSpec(...), staging_dir)           # Harbor task directory
    image = engine.build(task.environment_dir)              # ImageBuildFailedError → skip
    trial = TrialTask(image=image.tag, task_dir=task.path)
    matrix = run_matrix(engine, trial, parallelism=2)
    if not matrix.passed: ...                               # skip reason "trials_failed"
    evidence = matrix.model_dump()                          # rewards + evidence per control
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import docker
from pydantic import BaseModel, ConfigDict, Field

from traj2env_assets.docker_engine.base_images import (
    DEBIAN_MIRROR,
    DEFAULT_BASE_IMAGES,
    BaseImageOutcome,
    BaseImageSpec,
    ensure_base_images,
)
from traj2env_assets.docker_engine.connection import DEFAULT_PLATFORM, connect, image_present
from traj2env_assets.docker_engine.image_build import BuiltImage, build_image, find_image
from traj2env_assets.docker_engine.prune import PruneReport, prune
from traj2env_assets.docker_engine.sandbox import ContainerLimits, TrialSettings


class DockerEngine(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    platform: str = DEFAULT_PLATFORM
    container_memory: str = "4g"
    trial_cpus: float = Field(default=1.0, gt=0)
    pids_limit: int = 512
    build_timeout_s: float = 900
    agent_timeout_s: float = 600
    verifier_timeout_s: float = 600
    debian_mirror: str = DEBIAN_MIRROR
    lock_dir: Path | None = None
    container_labels: dict[str, str] = Field(default_factory=dict)

    @cached_property
    def client(self) -> docker.DockerClient:
        return connect()

    def ensure_bases(self, specs: Sequence[BaseImageSpec] = DEFAULT_BASE_IMAGES) -> list[BaseImageOutcome]:
        return ensure_base_images(self.client, specs, mirror=self.debian_mirror)

    def build(self, context_dir: Path, *, timeout_s: float | None = None) -> BuiltImage:
        return build_image(
            self.client,
            context_dir,
            platform=self.platform,
            timeout_s=timeout_s or self.build_timeout_s,
            lock_dir=self.lock_dir,
        )

    def has_image(self, tag: str) -> bool:
        return image_present(self.client, tag)

    def find(self, context_dir: Path) -> BuiltImage | None:
        """The image ``build`` would return, if it exists already; never builds."""
        return find_image(self.client, context_dir, platform=self.platform)

    def limits(self) -> ContainerLimits:
        return ContainerLimits(memory=self.container_memory, cpus=self.trial_cpus, pids=self.pids_limit)

    def trial_settings(self) -> TrialSettings:
        return TrialSettings(
            limits=self.limits(),
            agent_timeout_s=self.agent_timeout_s,
            verifier_timeout_s=self.verifier_timeout_s,
            labels=self.container_labels,
        )

    def prune(self, *, include_bases: bool = False) -> PruneReport:
        return prune(self.client, include_bases=include_bases)

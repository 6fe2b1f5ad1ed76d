"""Optional: the Trajectory platform spec of the published tasks (not part of ``make run``)."""

from pathlib import Path

import dagster as dg

from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.families.registry import Families
from traj2env_assets.layout import TRAJECTORY_SPEC_DIR
from traj2env_assets.trajectory_export.export import export_spec


class TrajectorySpecConfig(dg.Config):
    out: str = TRAJECTORY_SPEC_DIR
    """Relative paths resolve against the workspace."""
    wheelhouse: str | None = None


@dg.asset(
    group_name="publish",
    kinds={"docker", "python"},
    deps=["harbor_dataset"],
    description="benchmark/ (harness image Dockerfile, harness.py, archived tasks, wheels) and "
    "upload.py for the Trajectory platform, from the published tasks and their splits.",
)
def trajectory_spec(
    config: TrajectorySpecConfig, pipeline: PipelineResource, families: dg.ResourceParam[Families]
) -> dg.MaterializeResult:
    out = pipeline.workspace().resolve(config.out)
    summary = export_spec(
        pipeline.settings().output.destination,
        out,
        families,
        wheelhouse=Path(config.wheelhouse) if config.wheelhouse else None,
    )
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(summary.spec_dir)),
            "tasks": summary.tasks,
            "train": summary.train,
            "test": summary.test,
            "context_files": summary.context_files,
            "context_mib": round(summary.context_bytes / 2**20, 1),
        }
    )

"""The design card's stages, in order: the one list the asset graph, the per-trajectory
job, the candidates' status names and the table in ``docs/stages.md`` are derived from.

A stage's name is its asset key (the candidates stage has one asset per family, keyed
``candidates/<family>``), the name ``status.json`` records for the candidate stages, and
its folder ``traj2env_assets/stages/<stage>/``, which holds the stage's domain code and,
in ``asset.py``, its Dagster asset. A ground module (it imports nothing of the package):
the glue, the lifecycle and the stages all read these names.
"""

from typing import Literal, get_args

TrajectoryStage = Literal["convert", "scan", "replay"]
"""Stages that work on a trajectory before it has candidates."""
CandidateStage = Literal["candidates", "proposals", "images", "calibration", "trials", "publish"]
"""Stages that work on each candidate; ``status.json`` records how far a candidate got in these."""
RunStage = Literal["report"]
"""The stage over every trajectory of the run (not partitioned)."""
StageName = Literal[TrajectoryStage, CandidateStage, RunStage]

STAGES: tuple[StageName, ...] = get_args(StageName)
CANDIDATE_STAGES: tuple[CandidateStage, ...] = get_args(CandidateStage)
PER_TRAJECTORY_STAGES: tuple[StageName, ...] = STAGES[: STAGES.index("report")]
"""The stages partitioned by trajectory: every stage but the report."""

"""A hand-made Python task calibrated for the behaviour gate in its own image, as the
lifecycle's calibration stage does it (the gate's probe, then its judgement), so trials of
hand-made tasks meet the verifier the pipeline publishes."""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import CalibrationPlan
from traj2env_assets.harbor.task_spec import TaskSpec
from traj2env_assets.harbor.writer import WrittenTask, write_task
from traj2env_assets.stages.calibration.calibration import run_probes
from traj2env_assets.stages.calibration.gate_judge import GateJudgement, judge_gate
from traj2env_assets.stages.calibration.gate_probe import gate_probe


def write_gated_task(engine: DockerEngine, spec: TaskSpec, dataset: Path) -> tuple[WrittenTask, GateJudgement]:
    """Write ``spec``, build its image, calibrate its gate there and write it again with the gate."""
    assert spec.tests is not None
    image = engine.build(write_task(spec, dataset).environment_dir)
    [probe] = run_probes(engine, image.tag, CalibrationPlan(probes=[gate_probe(spec)]))
    judgement = judge_gate(
        probe, tracked_tests=spec.tests.tracked_test_ids, fraction_reward=spec.tests.reward == "fraction"
    )
    assert judgement.gate is not None, judgement.facts
    tests = spec.tests.model_copy(update={"behaviour_gate": judgement.gate})
    return write_task(spec.model_copy(update={"tests": tests}), dataset), judgement

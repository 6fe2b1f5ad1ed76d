"""The extend task of the bundled Codex multi-request sample, in the real Docker engine:
calibration's probes (the split on base and reference, the changed code's mutants) and the
family's whole trial matrix (reference 1.0, every other control 0.0)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import ProbeResult, TaskSource
from traj2env_assets.families.extend.candidates import (
    ExtendCandidate,
    mine_extend_candidates,
)
from traj2env_assets.families.extend.family import ExtendFamily
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.stages.calibration.calibration import run_probes
from traj2env_assets.verification.trial import TrialTask, run_matrix
from traj2env_assets_tests.families.conftest import EXAMPLES, record_for

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SOURCE = TaskSource(partition_key="numstats", source_model=None, org="traj2env")


def _candidate(sample: str, directory: Path) -> ExtendCandidate:
    return mine_extend_candidates(record_for(EXAMPLES / sample, directory), "numstats")[0].candidate


def _calibrate(
    engine: DockerEngine, candidate: ExtendCandidate, tmp_path: Path
) -> tuple[dict[str, ProbeResult], Path, str]:
    family = ExtendFamily()
    spec = family.task_spec(candidate, None, SOURCE)
    written = write_task(spec, tmp_path / "tasks")
    image = engine.build(written.environment_dir)
    results = run_probes(engine, image.tag, family.calibration_plan(candidate, spec, None))
    return {result.name: result for result in results}, written.path, image.tag


def test_recorded_extend_task_calibrates_and_passes_its_trial_matrix(engine: DockerEngine, tmp_path: Path) -> None:
    family = ExtendFamily()
    candidate = _candidate("codex/python-extend-feature.jsonl", tmp_path / "replay")
    started = time.monotonic()
    results, task_dir, tag = _calibrate(engine, candidate, tmp_path)

    verdict = family.judge_calibration(candidate, results)
    assert verdict.drop is None, verdict.drop
    assert (verdict.facts["new_tests"], verdict.facts["existing_tests"], verdict.facts["discriminating_tests"]) == (
        11,
        6,
        11,
    )
    kill_rate = verdict.facts["kill_rate"]
    assert isinstance(kill_rate, float)
    assert verdict.facts["mutants"] == 22 and kill_rate >= 0.5
    print(f"calibration: {time.monotonic() - started:.1f} s; {verdict.facts}")

    matrix = run_matrix(
        engine,
        TrialTask(image=tag, task_dir=task_dir),
        family.controls(candidate),
        parallelism=2,
    )
    rewards = matrix.rewards()
    assert rewards.pop("reference") == 1.0
    assert set(rewards) >= {"noop", "base_only", "reference_with_forgery", "report_forgery", "tests_edit"}
    assert set(rewards.values()) == {0.0}, rewards


def test_a_changed_test_file_that_no_longer_loads_on_the_base_is_tests_not_collected_before(
    engine: DockerEngine, tmp_path: Path
) -> None:
    candidate = _candidate("claude-code/python-extend-shared-test-file.jsonl", tmp_path / "replay")
    results, _, _ = _calibrate(engine, candidate, tmp_path)

    verdict = ExtendFamily().judge_calibration(candidate, results)
    assert verdict.drop is not None and verdict.drop.reason == "tests_not_collected_before"
    assert "tests/test_numstats.py" in verdict.drop.detail

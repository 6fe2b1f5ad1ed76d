"""A session whose fix edits the code and the tests becomes a published repair task
(real Docker engine, the whole pipeline): the agent starts from the old code with the
session's final tests, the reference is the code change alone, the tracked tests are the
ones failing on the old code with those tests, and the trial matrix holds (reference 1.0,
no-op and every other control 0.0)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from traj2env_assets_tests.example_run import run_examples
from traj2env_assets_tests.families import final_tests_session as session

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_fix_of_code_and_tests_is_published_with_the_final_tests(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    session.write_final_tests_session(sessions / "final-tests.jsonl")
    report = run_examples(tmp_path, source=sessions, families=["repair"], rerun=False).first
    [candidate] = [c for c in report["candidates"] if c["family"] == "repair"]
    assert candidate["kept"], candidate
    rewards = dict(candidate["trial_rewards"])
    assert rewards.pop("reference") == 1.0 and rewards.pop("noop") == 0.0
    assert rewards and set(rewards.values()) == {0.0}
    task = Path(candidate["published_path"])
    metadata = tomllib.loads((task / "task.toml").read_text())["metadata"]
    assert (metadata["tests_from"], metadata["tests_changed_by_fix"]) == ("session_final", [session.TESTS])
    # The agent's project: the old code, the final tests; the reference: the code alone.
    workspace = task / "environment" / "workspace"
    assert (workspace / session.MODULE).read_text() == session.OLD_MODULE
    assert (workspace / session.TESTS).read_text() == session.NEW_TESTS
    solution = task / "solution" / "files"
    assert sorted(p.relative_to(solution).as_posix() for p in solution.rglob("*") if p.is_file()) == [session.MODULE]
    assert (solution / session.MODULE).read_text() == session.NEW_MODULE
    # Tracked: the tests failing on the old code with the final tests, not the corrected one.
    tracked = (task / "tests" / "traj2env" / "tracked_ids.txt").read_text().split()
    assert tracked == session.TRACKED
    instruction = (task / "instruction.md").read_text()
    assert "FAILED tests/test_mod.py::test_discount_halves" in instruction and "test_total" not in instruction

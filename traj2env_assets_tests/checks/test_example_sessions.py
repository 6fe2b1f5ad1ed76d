"""Checks judged on the bundled example sessions: real runs recorded in four log formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.checks import parse_check_result, recognise_check
from traj2env_assets.formats.convert import convert_source
from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record

EXAMPLES = Path(__file__).parents[2] / "examples" / "trajectories"
INTERVALS = [
    "tests/test_intervals.py::test_touching_intervals_merge",
    "tests/test_intervals.py::test_chain_of_touching_intervals_merges_into_one",
]
EXPECTED = {
    "python-pytest-fix": ("pytest", INTERVALS),
    "python-unittest-fix": ("unittest", ["tests.test_slugify.SlugifyTest.test_runs_of_punctuation_collapse"]),
    "node-npm-test-fix": ("npm", ["countWords ignores case", "topWords orders by count, then alphabetically"]),
    "python-deps-pytest-fix": ("pytest", ["tests/test_events.py::test_soonest_first_across_time_zones"]),
    "node-describe-fix": (
        "npm",
        [
            "cart > total > takes a percentage off the subtotal",
            "cart > total > rounds the discount to the nearest cent",
        ],
    ),
    "python-ruff-fix": (
        "ruff",
        [
            "inventory.py: F401 `os` imported but unused",
            "inventory.py: F841 Local variable `count` is assigned to but never used",
            "inventory.py: E711 Comparison to `None` should be `cond is not None`",
        ],
    ),
}


def _session(fmt: str, name: str) -> Path:
    return next(p for p in (EXAMPLES / fmt).iterdir() if p.stem == name)


@pytest.mark.parametrize("fmt", ["claude-code", "codex", "pi", "atif"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fix_sessions_fail_then_pass_with_the_recorded_failing_tests(fmt: str, name: str, tmp_path: Path) -> None:
    converted = convert_source(_session(fmt, name))
    assert converted.trajectory is not None
    write_record(replay_trajectory(converted.trajectory), tmp_path)
    record = ReplayRecord.load(tmp_path)
    verdicts = []
    for command in record.shell_commands():
        check = recognise_check(command.command, record.files_before(command.command_index), cwd=command.cwd or "")
        if check is not None:
            result = parse_check_result(check, command.output, command.exit_code)
            verdicts.append((check.tool, result.passed, result.failing_ids))
    tool, failing = EXPECTED[name]
    assert verdicts[0] == (tool, False, failing)
    assert verdicts[-1] == (tool, True, [])

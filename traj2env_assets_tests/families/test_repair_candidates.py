"""Mining fail→pass pairs: the bundled samples in every format, and the edge cases."""

from __future__ import annotations

import pytest

from traj2env_assets.families.repair.candidates import mine_repair_candidates
from traj2env_assets.families.repair.task import (
    UnverifiableCheck,
    repair_task_spec,
)
from traj2env_assets_tests.families.conftest import EXAMPLES

FORMATS = {"atif": ".json", "claude-code": ".jsonl", "codex": ".jsonl", "pi": ".jsonl"}
EXPECTED = {
    "python-pytest-fix": ("candidate", None, ["intervals.py"]),
    "node-npm-test-fix": ("candidate", None, ["src/wordfreq.js"]),
    "python-unittest-fix": ("candidate", None, ["slugify.py"]),
    "python-pytest-config-cheat": ("dropped", "fix_changes_check_config", ["pytest.ini"]),
    # Only the tests changed: the session made the check pass by changing what it expects.
    "python-pytest-test-edit": ("dropped", "fix_changes_only_tests", ["tests/test_intervals.py"]),
    "node-npm-test-config-cheat": ("dropped", "fix_changes_check_config", ["package.json"]),
    "python-deps-pytest-fix": ("candidate", None, ["events.py"]),
    "node-describe-fix": ("candidate", None, ["src/cart.js"]),
    "python-ruff-fix": ("candidate", None, ["inventory.py"]),
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_samples_give_the_documented_outcome(sample_record, fmt: str, scenario: str) -> None:
    record = sample_record(f"{fmt}/{scenario}{FORMATS[fmt]}")
    candidates = mine_repair_candidates(record, "key")
    assert len(candidates) == 1
    status, reason, fixed = EXPECTED[scenario]
    mined = candidates[0]
    assert ("dropped" if mined.drop else "candidate", mined.drop and mined.drop.reason) == (status, reason)
    assert sorted([*mined.candidate.fixed_files, *mined.candidate.deleted_files]) == fixed
    assert mined.facts["fixed_paths"] == fixed


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_all_pass_session_has_no_candidate(sample_record, fmt: str) -> None:
    assert mine_repair_candidates(sample_record(f"{fmt}/python-pytest-all-pass{FORMATS[fmt]}"), "key") == []


def test_same_fix_in_every_format_gets_the_same_fix_hash(sample_record) -> None:
    hashes = {
        mine_repair_candidates(sample_record(f"{fmt}/python-pytest-fix{ext}"), "key")[0].candidate.fix_hash
        for fmt, ext in FORMATS.items()
    }
    assert len(hashes) == 1


def test_candidate_carries_the_failing_state_and_ids(sample_record) -> None:
    candidate = mine_repair_candidates(sample_record("claude-code/python-pytest-fix.jsonl"), "claude-code-s1")[
        0
    ].candidate
    assert candidate.failing_ids == [
        "tests/test_intervals.py::test_touching_intervals_merge",
        "tests/test_intervals.py::test_chain_of_touching_intervals_merges_into_one",
    ]
    assert "start < merged[-1][1]" in candidate.project_files["intervals.py"]
    assert "start <= merged[-1][1]" in candidate.fixed_files["intervals.py"]
    assert candidate.task_id == f"claude-code-s1-{candidate.fix_hash}"
    assert candidate.fail_exit_code == 1


def test_unittest_and_node_ids_map_to_verifier_ids(sample_record) -> None:
    unittest = mine_repair_candidates(sample_record("pi/python-unittest-fix.jsonl"), "k")[0].candidate
    spec = repair_task_spec(unittest, source_trace="k", source_model=None, org="local")
    assert spec.tests is not None
    assert spec.tests.runner == "pytest"
    assert spec.tests.tracked_test_ids == ["tests/test_slugify.py::SlugifyTest::test_runs_of_punctuation_collapse"]
    node = mine_repair_candidates(sample_record("codex/node-npm-test-fix.jsonl"), "k")[0].candidate
    spec = repair_task_spec(node, source_trace="k", source_model=None, org="local")
    assert spec.tests is not None
    assert (spec.tests.runner, spec.base_image) == ("node", "node")
    assert spec.tests.tracked_test_ids == [
        "test/wordfreq.test.js::countWords ignores case",
        "test/wordfreq.test.js::topWords orders by count, then alphabetically",
    ]


def test_check_without_tracked_ids_is_not_verifiable(sample_record) -> None:
    candidate = mine_repair_candidates(sample_record("claude-code/python-pytest-fix.jsonl"), "k")[0].candidate
    with pytest.raises(UnverifiableCheck):
        repair_task_spec(
            candidate.model_copy(update={"failing_ids": []}), source_trace="k", source_model=None, org="local"
        )


def test_example_samples_exist_in_every_format() -> None:
    for fmt, ext in FORMATS.items():
        assert {p.stem for p in (EXAMPLES / fmt).glob(f"*{ext}")} >= set(EXPECTED)

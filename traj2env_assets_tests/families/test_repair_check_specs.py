"""How the repair family's verifier tracks the checks real projects run: nested node
suites by leaf test, ruff/mypy by diagnostic (bundled samples, no Docker, no network)."""

from __future__ import annotations

import pytest

from traj2env_assets.checks import recognise_check
from traj2env_assets.families.repair.candidates import RepairCandidate, mine_repair_candidates
from traj2env_assets.families.repair.task import UnverifiableCheck, tracked_test_spec
from traj2env_assets.harbor import scripts
from traj2env_assets.harbor.task_spec import TaskSpec


def _candidate(sample_record, name: str) -> RepairCandidate:
    return mine_repair_candidates(sample_record(name), "k")[0].candidate


def test_nested_node_suites_are_tracked_by_leaf_with_their_suites_and_file(sample_record) -> None:
    spec = tracked_test_spec(_candidate(sample_record, "codex/node-describe-fix.jsonl"))
    assert spec.runner == "node"
    assert spec.tracked_test_ids == [
        "test/cart.test.js::cart > total > takes a percentage off the subtotal",
        "test/cart.test.js::cart > total > rounds the discount to the nearest cent",
    ]


def test_ruff_is_tracked_by_diagnostic_and_run_with_the_images_own_tool(sample_record) -> None:
    candidate = _candidate(sample_record, "pi/python-ruff-fix.jsonl")
    spec = tracked_test_spec(candidate)
    assert (spec.runner, spec.check_command, spec.reward) == ("lint", ["python3", "-I", "-m", "ruff", "check", "."], "check")
    assert spec.tracked_test_ids[0] == "inventory.py: F401 `os` imported but unused"
    task = TaskSpec(
        family="repair", task_id="t", instruction="x", base_image="python", source_trace="k",
        project_files={path: text.encode() for path, text in candidate.project_files.items()},
        solution_files={path: text.encode() for path, text in candidate.fixed_files.items()}, tests=spec,
    )
    # Only the tool's configuration comes back from the pristine image, never the code.
    assert task.pristine_paths() == ["pyproject.toml"]
    script = scripts.test_sh(task)
    assert "-name ruff.toml" in script and "-name .mypy_cache" in script and "-name tests" not in script
    assert "python3 -I -m ruff check ." in script and "lint_verdict.py" in script


def test_lint_runs_that_fix_or_never_fail_are_repeated_without_fix_or_refused(sample_record) -> None:
    candidate = _candidate(sample_record, "pi/python-ruff-fix.jsonl")
    files = candidate.project_files
    fixing = candidate.model_copy(update={"check": recognise_check("ruff check --fix .", files)})
    assert tracked_test_spec(fixing).check_command == ["python3", "-I", "-m", "ruff", "check", "."]
    never_fails = candidate.model_copy(update={"check": recognise_check("ruff check --exit-zero .", files)})
    with pytest.raises(UnverifiableCheck):
        tracked_test_spec(never_fails)


def test_lint_diagnostics_in_a_subdirectory_are_named_from_the_project_root(sample_record) -> None:
    candidate = _candidate(sample_record, "pi/python-ruff-fix.jsonl").model_copy(update={"cwd": "pkg"})
    spec = tracked_test_spec(candidate)
    assert spec.check_dir == "pkg" and spec.tracked_test_ids[0] == "pkg/inventory.py: F401 `os` imported but unused"

"""What the gate keeps (traj2env_assets.stages.calibration.gate_judge), on real probe reports of the shop
project of our own making and on reports edited to show one rule each."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from traj2env_assets.families.contract import ProbeResult
from traj2env_assets.harbor.task_spec import VerifierSpec
from traj2env_assets.stages.calibration.calibration import _with_gate
from traj2env_assets.stages.calibration.gate_judge import (
    MIN_DISCRIMINATING_CASES,
    case_is_degenerate,
    judge_gate,
)
from traj2env_assets_tests.docker.sample_tasks import python_task
from traj2env_assets_tests.gate.probe_run import run_probe
from traj2env_assets_tests.gate.projects import BEFORE

TEST = "tests/test_shop.py::"
FAILING = [TEST + "test_tags_are_clean", TEST + "test_tags_of_one_word"]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_probe(tmp_path_factory.mktemp("probe"))


def _result(report: dict | None, output: str = "") -> ProbeResult:
    return ProbeResult(
        name="behaviour_gate",
        exit_code=0,
        timed_out=False,
        output_tail=output,
        seconds=1.0,
        result=json.dumps(report) if report is not None else None,
    )


def test_a_fix_gets_a_gate_covering_its_tests_with_discriminating_cases(report: dict) -> None:
    judgement = judge_gate(_result(report), tracked_tests=FAILING, fraction_reward=False)
    assert judgement.drop is None and judgement.gate is not None
    gate = judgement.gate
    assert judgement.facts["gate_coverage"] == 1.0
    discriminating = judgement.facts["gate_discriminating_cases"]
    assert isinstance(discriminating, int) and discriminating >= MIN_DISCRIMINATING_CASES
    assert set(gate.covered_tests) == {
        TEST + name
        for name in (
            "test_total_with_discount",
            "test_tags_are_clean",
            "test_tags_of_one_word",
            "test_basket_counts_items",
            "test_line_holds_quantity",
        )
    }
    assert TEST + "test_a_callback_is_not_plain_data" in gate.uncovered_tests
    # Every kept generalisation case rewards work: no degenerate submission answers it.
    for case in gate.cases:
        if case.kind == "generalisation":
            assert not case_is_degenerate(gate.expected[case.id], case.steps)


def test_coverage_counts_tracked_tests_the_gate_cannot_decide(report: dict) -> None:
    tracked = [*FAILING, TEST + "test_a_callback_is_not_plain_data"]
    judgement = judge_gate(_result(report), tracked_tests=tracked, fraction_reward=False)
    assert judgement.facts["gate_coverage"] == pytest.approx(2 / 3, abs=0.001)
    uncovered = judgement.facts["gate_uncovered_tests"]
    assert isinstance(uncovered, list)
    assert any("test_a_callback_is_not_plain_data" in line for line in uncovered)


def test_tests_outside_the_verifiers_selection_get_no_case(report: dict) -> None:
    # Calibration left test_basket_counts_items out of the run (it fails before and after
    # the change): the verifier never runs it, so a case for it could never be answered.
    left_out = TEST + "test_basket_counts_items"
    judgement = judge_gate(_result(report), tracked_tests=FAILING, fraction_reward=False, excluded=[left_out])
    assert judgement.gate is not None
    assert left_out not in judgement.gate.covered_tests and left_out not in judgement.gate.uncovered_tests
    assert all(case.test != left_out for case in judgement.gate.cases)
    assert all(judgement.gate.expected[case.id] for case in judgement.gate.cases)


def test_a_change_that_changes_nothing_is_not_discriminating(tmp_path: Path) -> None:
    judgement = judge_gate(_result(run_probe(tmp_path, after=BEFORE)), tracked_tests=FAILING, fraction_reward=False)
    assert judgement.drop is not None and judgement.drop.reason == "gate_not_discriminating"


def test_cases_answered_differently_twice_by_the_reference_are_not_kept(report: dict) -> None:
    flaky = copy.deepcopy(report)
    case = next(c for c in flaky["cases"] if c["test"] == TEST + "test_total_with_discount" and c["kind"] == "recorded")
    flaky["answers"]["reference_again"][case["id"]] = [{"r": 6}]
    judgement = judge_gate(_result(flaky), tracked_tests=FAILING, fraction_reward=False)
    assert judgement.gate is not None
    assert TEST + "test_total_with_discount" not in judgement.gate.covered_tests
    assert "twice" in judgement.gate.uncovered_tests[TEST + "test_total_with_discount"]


def test_generalisations_raising_what_the_tests_never_raised_are_out_of_domain(report: dict) -> None:
    edited = copy.deepcopy(report)
    generated = [c for c in edited["cases"] if c["kind"] == "generalisation"]
    for case in generated:
        for name in ("reference", "reference_again"):
            edited["answers"][name][case["id"]] = [{"x": ["TypeError", "Exception"], "m": "no"}] * len(case["steps"])
    judgement = judge_gate(_result(edited), tracked_tests=FAILING, fraction_reward=False)
    assert judgement.facts["gate_cases_out_of_domain"] == len(generated)
    assert judgement.drop is not None and judgement.drop.reason == "gate_not_discriminating"


def test_a_tracked_test_a_degenerate_submission_passes_stops_counting_toward_a_fraction(report: dict) -> None:
    edited = copy.deepcopy(report)
    case = next(c for c in edited["cases"] if c["test"] == TEST + "test_tags_of_one_word" and c["kind"] == "recorded")
    for name in ("reference", "reference_again"):
        edited["answers"][name][case["id"]] = [{"r": {"t": "list", "v": []}}]
    judgement = judge_gate(_result(edited), tracked_tests=FAILING, fraction_reward=True)
    assert judgement.untracked == [TEST + "test_tags_of_one_word"]
    binary = judge_gate(_result(edited), tracked_tests=FAILING, fraction_reward=False)
    assert binary.untracked == []


@pytest.mark.parametrize(
    ("answer", "degenerate"),
    [
        ({"r": None}, True),
        ({"r": {"t": "list", "v": []}}, True),
        ({"r": 0}, True),
        ({"r": ""}, True),
        ({"r": "abc"}, True),  # the first argument
        ({"r": 3}, True),  # the first argument's first item
        ({"x": ["ValueError", "Exception"], "m": "bad"}, True),
        ({"r": 7}, False),
        ({"r": {"t": "list", "v": [3]}}, False),
        ({"r": None, "a": [{"t": "list", "v": [4, 3]}], "k": {}}, False),  # it sorted its argument in place
    ],
)
def test_the_degenerate_family(answer: dict, degenerate: bool) -> None:
    step = {"call": "m:f", "args": [{"t": "list", "v": [3, 4]}], "kwargs": {}}
    if answer.get("r") == "abc":
        step = {"call": "m:f", "args": ["abc"], "kwargs": {}}
    assert case_is_degenerate([answer], [step]) is degenerate


def test_a_probe_that_left_no_report_gives_no_gate_and_says_why() -> None:
    judgement = judge_gate(_result(None, output="Traceback: boom"), tracked_tests=FAILING, fraction_reward=False)
    assert judgement.gate is None and judgement.drop is None
    absent = judgement.facts["gate_absent"]
    assert isinstance(absent, str)
    assert judgement.facts["gate_coverage"] == 0.0 and "boom" in absent


@pytest.mark.parametrize("run_targets", [["tests/test_shop.py"], ["tests"], ["."]])
def test_a_repair_check_keeps_its_cases_whatever_its_run_targets(report: dict, run_targets: list[str]) -> None:
    # A ``check`` reward's run targets are paths (the file, its folder, the root), not test ids:
    # the gate must still decide the tracked tests out of process (a gate stripped of its
    # cases let the in-process reading of the caller's line score 1.0).
    spec = python_task().model_copy(
        update={
            "tests": VerifierSpec(
                runner="pytest",
                tracked_test_ids=FAILING,
                reward="check",
                run_targets=run_targets,
                deselected_test_ids=[TEST + "test_basket_counts_items"],
            )
        }
    )
    gated, judgement = _with_gate(spec, _result(report), fraction=False)
    assert judgement.drop is None and gated.tests is not None and gated.tests.behaviour_gate is not None
    gate = gated.tests.behaviour_gate
    assert set(FAILING) <= set(gate.covered_tests)
    assert {case.test for case in gate.cases} >= set(FAILING)
    assert all(case.test != TEST + "test_basket_counts_items" for case in gate.cases)

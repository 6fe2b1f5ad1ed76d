"""The gate's probe (runtime/gate_probe.py) on a project of our own making, run with the
host's interpreter as it runs in a task image: what it records, what it generalises, and
what the worker answers on the reference and on the code before the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.gate.runtime.gate_probe import (
    MAX_STEPS_PER_TEST,
    STEPS_PER_LARGE_VARIANT,
)
from traj2env_assets_tests.gate.probe_run import run_probe
from traj2env_assets_tests.gate.projects import TESTS

TEST = "tests/test_shop.py::"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_probe(tmp_path_factory.mktemp("probe"))


def _recorded(report: dict, test: str) -> dict:
    return next(case for case in report["cases"] if case["kind"] == "recorded" and case["test"] == TEST + test)


def test_calls_from_tests_are_recorded_as_plain_data(report: dict) -> None:
    assert _recorded(report, "test_total_with_discount")["steps"] == [
        {"call": "shop:total", "args": [{"t": "list", "v": [3, 4]}], "kwargs": {"discount": 2}}
    ]
    assert report["roots"] == ["."]


def test_a_constructor_its_methods_a_property_and_a_static_method_are_one_sequence(report: dict) -> None:
    steps = _recorded(report, "test_basket_counts_items")["steps"]
    assert steps == [
        {"call": "shop:Basket", "args": ["ann"], "kwargs": {}},
        {"self": 0, "method": "add", "args": ["pear", 2], "kwargs": {}},
        {"self": 0, "method": "add", "args": ["fig", 3], "kwargs": {}},
        {"self": 0, "get": "size"},
        {"call": "shop:Basket.label", "args": ["big fig"], "kwargs": {}},
    ]
    answers = report["answers"]["reference"][_recorded(report, "test_basket_counts_items")["id"]]
    assert answers[0]["r"] == {
        "t": "object",
        "h": 0,
        "c": "Basket",
        "v": {"items": {"t": "list", "v": []}, "owner": "ann"},
    }
    assert [answer["r"] for answer in answers[1:]] == [1, 2, 2, "Big Fig"]


def test_a_dataclass_constructor_is_recorded(report: dict) -> None:
    steps = _recorded(report, "test_line_holds_quantity")["steps"]
    assert steps == [{"call": "shop:Line", "args": ["pear", 3], "kwargs": {}}]


def test_a_test_passing_values_that_are_not_plain_data_is_not_covered(report: dict) -> None:
    test = report["tests"][TEST + "test_a_callback_is_not_plain_data"]
    assert test["covered"] is False and "map" in test["why"]
    assert all(case["test"] != TEST + "test_a_callback_is_not_plain_data" for case in report["cases"])


def test_the_code_before_the_fix_answers_the_failing_tests_differently(report: dict) -> None:
    case = _recorded(report, "test_tags_are_clean")
    assert report["answers"]["reference"][case["id"]][0]["r"] == {"t": "list", "v": ["red", "blue", "green"]}
    assert report["answers"]["before"][case["id"]][0]["r"] != report["answers"]["reference"][case["id"]][0]["r"]
    unchanged = _recorded(report, "test_total_with_discount")
    assert report["answers"]["before"][unchanged["id"]] == report["answers"]["reference"][unchanged["id"]]


def test_generalisation_cases_perturb_the_recorded_arguments_and_keep_their_shape(report: dict) -> None:
    generated = [case for case in report["cases"] if case["kind"] == "generalisation"]
    tags_cases = [case for case in generated if case["test"] == TEST + "test_tags_are_clean"]
    assert 3 <= len(tags_cases) <= 8
    assert all(
        case["steps"][0]["call"] == "shop:tags" and isinstance(case["steps"][0]["args"][0], str) for case in tags_cases
    )
    assert len({case["steps"][0]["args"][0] for case in tags_cases}) == len(tags_cases)
    # The sequence keeps its calls and its handles; only arguments move.
    basket = [case for case in generated if case["test"] == TEST + "test_basket_counts_items"]
    assert basket and all(
        [step.get("method") for step in case["steps"]] == [None, "add", "add", None, None] for case in basket
    )


def test_the_cases_are_the_same_for_the_same_seed(tmp_path: Path, report: dict) -> None:
    again = run_probe(tmp_path)
    assert again["cases"] == report["cases"]


def test_a_test_with_many_independent_calls_is_judged_on_a_spread_sample(tmp_path: Path) -> None:
    many = (
        TESTS
        + """

def test_totals_of_many_lists():
    for n in range(300):
        assert total([n, n], discount=n) == n
"""
    )
    report = run_probe(tmp_path, tests=many)
    steps = _recorded(report, "test_totals_of_many_lists")["steps"]
    assert len(steps) == MAX_STEPS_PER_TEST
    assert steps[0]["args"] == [{"t": "list", "v": [0, 0]}] and steps[-1]["args"][0]["v"][0] > 290
    generated = [
        c for c in report["cases"] if c["test"] == TEST + "test_totals_of_many_lists" and c["kind"] != "recorded"
    ]
    assert generated and all(len(case["steps"]) <= STEPS_PER_LARGE_VARIANT for case in generated)

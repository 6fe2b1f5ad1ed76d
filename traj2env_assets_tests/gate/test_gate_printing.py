"""The gate sees what solution code prints where a test can see it: the till project
(``projects.py``), whose tests check a banner through ``capsys`` and a log record through
``caplog``, probed with the host's interpreter as in a task image and judged. A submission
that special-cases the printed tests' own arguments answers the gate's perturbed cases
unlike the reference."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from traj2env_assets.families.contract import ProbeResult
from traj2env_assets.gate.model import gate_files
from traj2env_assets.gate.runtime import WORKER, runtime_file
from traj2env_assets.gate.runtime.gate_probe import observed
from traj2env_assets.gate.runtime.gate_worker import answers_match
from traj2env_assets.stages.calibration.gate_judge import judge_gate
from traj2env_assets_tests.gate.probe_run import run_probe, write_project
from traj2env_assets_tests.gate.projects import (
    TILL_AFTER,
    TILL_BEFORE,
    TILL_SPECIAL_CASED,
    TILL_TESTS,
)

TEST = "tests/test_till.py::"
TRACKED = [TEST + name for name in ("test_total_adds_tax", "test_banner_is_printed", "test_out_of_stock_is_logged")]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_probe(
        tmp_path_factory.mktemp("till"), before=TILL_BEFORE, after=TILL_AFTER, tests=TILL_TESTS, name="till"
    )


def _judged(report: dict):
    result = ProbeResult(
        name="behaviour_gate",
        exit_code=0,
        timed_out=False,
        seconds=1.0,
        output_tail="",
        result=json.dumps(report),
    )
    return judge_gate(result, tracked_tests=TRACKED, fraction_reward=False)


def _answers(tmp_path: Path, module: str, cases: dict) -> dict[str, list]:
    """The worker's answers on a project holding ``module``, as the verifier runs it."""
    write_project(tmp_path / "project", module=module, tests=TILL_TESTS, name="till")
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    (tmp_path / WORKER).write_bytes(runtime_file(WORKER))
    out = tmp_path / "answers.jsonl"
    subprocess.run(
        [
            "bash",
            "-c",
            'exec "$0" -I "$1" "$2" "$3" 3>"$4"',
            sys.executable,
            str(tmp_path / WORKER),
            str(tmp_path / "project"),
            str(tmp_path / "cases.json"),
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return {answer["id"]: answer["steps"] for answer in map(json.loads, out.read_text().splitlines())}


def test_what_a_test_can_observe_comes_from_its_fixtures_and_its_module() -> None:
    assert observed(["capsys", "tmp_path"], "def test(caplog): pass") == ["output"]
    assert observed(["caplog"], "") == ["logs"]
    assert observed([], "with redirect_stdout(buffer):\n    self.assertLogs()") == ["output", "logs"]
    assert observed(["tmp_path"], "with pytest.raises(SystemExit):") == ["exit"]
    assert observed(["tmp_path"], "assert total(1) == 2") == []


def test_printed_and_logged_calls_are_answered_with_what_they_print(report: dict) -> None:
    recorded = {case["test"]: case for case in report["cases"] if case["kind"] == "recorded"}
    banner, stock, tax = (recorded[test] for test in (TRACKED[1], TRACKED[2], TRACKED[0]))
    assert banner["observe"] == ["output"] and stock["observe"] == ["logs"] and tax["observe"] == []
    answers = report["answers"]["reference"]
    assert answers[banner["id"]] == [{"r": None, "p": {"out": "== SHOP: 3 items ==\n", "err": ""}}]
    assert answers[stock["id"]] == [{"r": False, "p": {"log": [["till", "WARNING", "fig is out of stock"]]}}]
    assert "p" not in answers[tax["id"]][0]
    # The code before the fix printed otherwise for the very same call.
    assert report["answers"]["before"][banner["id"]] == [{"r": None, "p": {"out": "shop: 3 items\n", "err": ""}}]


def test_perturbed_printing_cases_are_kept_and_a_special_cased_submission_fails_them(
    report: dict,
    tmp_path: Path,
) -> None:
    judgement = _judged(report)
    assert judgement.gate is not None, judgement.facts
    gate = judgement.gate
    assert set(gate.covered_tests) == set(TRACKED) and judgement.untracked == []
    kept = {
        test: [case for case in gate.cases if case.test == test and case.kind == "generalisation"] for test in TRACKED
    }
    # A call returning None (or False) counts as work when it prints: its perturbations are kept.
    assert kept[TRACKED[1]] and kept[TRACKED[2]]
    cases, expected = gate_files(gate)
    for module, failing in ((TILL_AFTER, set()), (TILL_SPECIAL_CASED, {TRACKED[1], TRACKED[2]})):
        given = _answers(tmp_path / str(len(failing)), module, cases.model_dump())
        failed_tests = {
            case.test
            for case_id, case in expected.cases.items()
            if not answers_match(
                case.answers, given.get(case_id), next(c.steps for c in gate.cases if c.id == case_id)
            )[0]
        }
        assert failed_tests == failing


def test_printing_that_differs_between_two_reference_runs_is_not_judged(report: dict) -> None:
    shaken = json.loads(json.dumps(report))
    [banner] = [case for case in shaken["cases"] if case["kind"] == "recorded" and case["test"] == TRACKED[1]]
    shaken["answers"]["reference_again"][banner["id"]][0]["p"]["out"] = "== SHOP: 3 items == at 12:01\n"
    gate = _judged(shaken).gate
    assert gate is not None and TRACKED[1] in gate.covered_tests
    assert gate.expected[banner["id"]] == [{"r": None}]


def test_an_exit_code_is_answered_where_the_test_can_see_it(tmp_path: Path) -> None:
    module = (
        "import sys\n\n\ndef run(n):\n"
        "    if n < 0:\n        sys.exit(2)\n"
        "    if n == 0:\n        raise SystemExit('nothing to do')\n"
        "    print(n)\n"
    )
    steps = [{"call": "till:run", "args": [n], "kwargs": {}} for n in (-1, 0, 3)]
    cases = {
        "roots": ["."],
        "cases": [
            {"id": "exit", "steps": steps, "observe": ["exit"]},
            {"id": "both", "steps": steps, "observe": ["output", "exit"]},
            {"id": "blind", "steps": steps},
        ],
    }
    answers = _answers(tmp_path, module, cases)
    assert [answer["p"] for answer in answers["exit"]] == [{"exit": 2}, {"exit": "nothing to do"}, {"exit": None}]
    assert answers["both"][2]["p"] == {"out": "3\n", "err": "", "exit": None}
    assert all("p" not in answer for answer in answers["blind"])
    # Another exit code for the same call is another answer; the class alone no longer matches.
    other = [{**answers["exit"][0], "p": {"exit": 1}}, *answers["exit"][1:]]
    assert answers_match(answers["exit"], answers["exit"], steps)[0]
    assert not answers_match(answers["exit"], other, steps)[0]

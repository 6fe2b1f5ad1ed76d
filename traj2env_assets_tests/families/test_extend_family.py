"""The extend family without Docker: mining the multi-request samples, the recorded and llm
task specs, the changed-code mutants, the calibration judgement and the split verdict."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import sys
import tomllib
import zlib
from importlib import resources
from pathlib import Path

import pytest

from traj2env_assets.families.contract import (
    CandidateRejected,
    Drop,
    MiningInput,
    ProbeResult,
    TaskSource,
)
from traj2env_assets.families.extend.calibration import calibration_plan, judge
from traj2env_assets.families.extend.candidates import (
    ExtendCandidate,
    mine_extend_candidates,
)
from traj2env_assets.families.extend.changed_code import (
    changed_code_mutants,
    changed_lines,
)
from traj2env_assets.families.extend.contract_text import recorded_contract
from traj2env_assets.families.extend.family import ExtendFamily
from traj2env_assets.families.extend.proposal import ExtendProposal
from traj2env_assets.families.extend.pytests import test_functions as functions_of
from traj2env_assets.families.extend.request_context import needs_context
from traj2env_assets.families.extend.task import extend_task_spec, proposal_test_path
from traj2env_assets.harbor.task_spec import VerifierSpec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.mutation.probes import MARKER
from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets_tests.replay.builders import SessionBuilder

SOURCE = TaskSource(partition_key="session", source_model=None, org="local")
FEATURE = ["claude-code/python-extend-feature.jsonl", "codex/python-extend-feature.jsonl"]


@pytest.fixture
def feature(sample_record) -> ExtendCandidate:
    return mine_extend_candidates(sample_record(FEATURE[1]), "session")[0].candidate


@pytest.mark.parametrize("sample", FEATURE)
def test_each_later_request_is_a_candidate_with_recorded_new_and_existing_tests(sample_record, sample: str) -> None:
    second, third = mine_extend_candidates(sample_record(sample), "session")

    assert (second.task_id, second.drop, third.task_id) == ("session-extend-2", None, "session-extend-3")
    candidate = second.candidate
    assert sorted(candidate.changed_files) == ["numstats.py", "tests/test_spread.py"]
    assert len(candidate.recorded_new_tests) == 11
    assert all(t.startswith("tests/test_spread.py::test_") for t in candidate.recorded_new_tests)
    existing_file = "tests/test_numstats.py"
    assert candidate.recorded_existing_tests == sorted(functions_of(existing_file, candidate.base_files[existing_file]))
    assert len(candidate.recorded_existing_tests) == 6
    assert "mode(" not in candidate.base_files["numstats.py"]
    assert (third.drop.reason if third.drop else None) == "not_python"


def test_a_test_the_request_rewrote_is_new_not_existing(sample_record) -> None:
    [mined] = mine_extend_candidates(sample_record("claude-code/python-extend-shared-test-file.jsonl"), "session")
    candidate = mined.candidate
    assert len(candidate.recorded_new_tests) == 5
    assert len(candidate.recorded_existing_tests) == 6
    assert not set(candidate.recorded_new_tests) & set(candidate.recorded_existing_tests)


def test_single_request_sessions_have_no_extend_candidate(sample_record) -> None:
    assert mine_extend_candidates(sample_record("claude-code/python-pytest-fix.jsonl"), "session") == []


CALC = "def add(a, b):\n    return a + b\n"
SUB = CALC + "\n\ndef sub(a, b):\n    return a - b\n"
SUB_TESTS = "from calc import sub\n\n" + "".join(
    f"def test_sub_{n}():\n    assert sub({n}, 1) == {n - 1}\n\n" for n in range(1, 6)
)


def _record(builder: SessionBuilder, tmp_path: Path) -> ReplayRecord:
    write_record(replay_trajectory(builder.build()), tmp_path / "record")
    return ReplayRecord.load(tmp_path / "record")


def _calc_session() -> SessionBuilder:
    return (
        SessionBuilder()
        .user("Build calc.py with add().")
        .call("Write", {"file_path": "calc.py", "content": CALC})
        .call("Write", {"file_path": "README.md", "content": "# calc\n"})
    )


def _mine_session(record: ReplayRecord):
    source = MiningInput(partition_key="session", record=record, trajectory_path=Path("unused.json"))
    return ExtendFamily().mine_session(source)


def test_requests_that_change_no_file_are_no_candidates_but_are_counted(tmp_path: Path) -> None:
    session = (
        _calc_session()
        .user("What does add() do?")
        .call("Read", {"file_path": "calc.py"}, "     1\tdef add(a, b):\n", file_content=CALC)
        .user("Add sub() with tests.")
        .call("Write", {"file_path": "calc.py", "content": SUB})
        .call("Write", {"file_path": "tests/test_sub.py", "content": SUB_TESTS})
        .bash("python -m pytest -q", "5 passed in 0.01s")
        .user("Thanks!")
    )
    mining = _mine_session(_record(session, tmp_path))
    assert [mined.task_id for mined in mining.candidates] == ["session-extend-3"]
    assert mining.facts == {"requests_without_changes": 2}
    assert mining.candidates[0].drop is None


def test_a_lost_file_the_project_does_not_need_is_left_out_and_the_task_says_so(tmp_path: Path) -> None:
    session = (
        _calc_session()
        .user("Add sub() with tests and mention it in the README.")
        .call("Write", {"file_path": "calc.py", "content": SUB})
        .call("Write", {"file_path": "tests/test_sub.py", "content": SUB_TESTS})
        .call("Edit", {"file_path": "README.md", "old_string": "not there", "new_string": "sub()"})
        .bash("python -m pytest -q", "5 passed in 0.01s")
    )
    [mined] = mine_extend_candidates(_record(session, tmp_path), "session")
    assert mined.drop is None
    assert mined.candidate.left_out_files == ["README.md"] and mined.facts["left_out_files"] == ["README.md"]
    # The reference keeps the base's README; solve.sh does not touch it.
    assert mined.candidate.reference_files["README.md"] == "# calc\n"
    spec = extend_task_spec(mined.candidate, None, SOURCE)
    assert set(spec.solution_files) == {"calc.py"} and spec.solution_deleted == []
    assert "does not show in full were left out: README.md" in spec.instruction


def test_a_lost_python_source_file_drops_the_candidate(tmp_path: Path) -> None:
    session = (
        _calc_session()
        .user("Add sub() in a new module and fix calc.py.")
        .call("Write", {"file_path": "ops.py", "content": "def sub(a, b):\n    return a - b\n"})
        .call("Edit", {"file_path": "calc.py", "old_string": "no such text", "new_string": "x"})
        .call("Edit", {"file_path": "README.md", "old_string": "no such text", "new_string": "x"})
    )
    [mined] = mine_extend_candidates(_record(session, tmp_path), "session")
    assert mined.drop == Drop(reason="project_files_lost", detail="changed but not known in full: calc.py")
    assert mined.candidate.left_out_files == ["README.md"]


def test_a_request_that_only_lost_a_doc_is_not_python(tmp_path: Path) -> None:
    session = (
        _calc_session()
        .user("Reword the README.")
        .call("Edit", {"file_path": "README.md", "old_string": "no such text", "new_string": "x"})
    )
    mining = _mine_session(_record(session, tmp_path))
    assert [mined.drop.reason if mined.drop else None for mined in mining.candidates] == ["not_python"]
    assert mining.facts == {"requests_without_changes": 0}


def _written(builder: SessionBuilder, tmp_path: Path) -> Path:
    path = tmp_path / "trajectory.json"
    path.write_text(builder.build().model_dump_json(), encoding="utf-8")
    return path


def _agreeing_session(proposal: str | None) -> SessionBuilder:
    session = _calc_session().call("Read", {"file_path": "calc.py"}, "1\tdef add", file_content=CALC)
    if proposal is not None:
        session = session.say(proposal).call("Read", {"file_path": "README.md"}, "1\t# calc", file_content="# calc\n")
    return (
        session.user("Yes, go ahead!")
        .call("Write", {"file_path": "calc.py", "content": SUB})
        .call("Write", {"file_path": "tests/test_sub.py", "content": SUB_TESTS})
        .bash("python -m pytest -q", "5 passed in 0.01s")
    )


@pytest.mark.parametrize(
    "request_text",
    [
        "yes",
        "Do it.",
        "ok go ahead please",
        "sure",
        "fix it",
        "Implement the plan.",
        "Yes to all",
        "yes do the quickstart",
    ],
)
def test_short_or_affirmative_requests_need_context(request_text: str) -> None:
    assert needs_context(request_text)


@pytest.mark.parametrize(
    "request_text",
    [
        "Add sub() with tests.",
        "Make the parser accept empty lines",
        "Yes, and also make the CSV export skip empty rows",
    ],
)
def test_a_stated_request_needs_no_context(request_text: str) -> None:
    assert not needs_context(request_text)


def test_an_affirmative_request_is_stated_with_the_assistants_proposal(tmp_path: Path) -> None:
    proposal = "Done with add().\n\nShould I also add sub(a, b) returning a - b, with tests?"
    session = _agreeing_session(proposal)
    [mined] = mine_extend_candidates(_record(session, tmp_path), "session", _written(session, tmp_path))
    assert mined.drop is None and mined.candidate.request_context == proposal
    spec = extend_task_spec(mined.candidate, None, SOURCE)
    assert spec.instruction.startswith(
        "The assistant proposed:\n\n> Done with add().\n>\n> Should I also add sub(a, b) returning a - b, with tests?"
        "\n\nThe user answered: Yes, go ahead!\n\n"
    )
    assert ExtendFamily().proposal_request(mined.candidate).values["request"].startswith("The assistant proposed:")


def test_an_affirmative_request_without_a_proposal_is_request_needs_context(tmp_path: Path) -> None:
    session = _agreeing_session(None)
    [mined] = mine_extend_candidates(_record(session, tmp_path), "session", _written(session, tmp_path))
    assert mined.drop is not None and mined.drop.reason == "request_needs_context"
    assert "'Yes, go ahead!'" in mined.drop.detail


def test_project_size_matters_only_for_a_prompt(feature: ExtendCandidate) -> None:
    large = feature.model_copy(update={"base_files": {**feature.base_files, "data.py": "X = 1\n" * 30_000}})
    # Recorded mode sends nothing: the candidate becomes a task whatever its size.
    assert extend_task_spec(large, None, SOURCE).tests is not None
    with pytest.raises(CandidateRejected) as rejected:
        ExtendFamily().proposal_request(large)
    assert rejected.value.drop.reason == "project_too_large" and "150,000" in rejected.value.drop.detail
    assert ExtendFamily().proposal_request(feature).prompt == "extend"


def test_pytest_ids_leave_out_parametrized_tests_and_classes_with_init() -> None:
    source = (
        "import pytest\n\n"
        "def test_a():\n    pass\n\n"
        "@pytest.mark.parametrize('x', [1, 2])\ndef test_p(x):\n    pass\n\n"
        "class TestGroup:\n    def test_b(self):\n        pass\n    def helper(self):\n        pass\n\n"
        "class TestInit:\n    def __init__(self):\n        pass\n    def test_c(self):\n        pass\n"
    )
    assert sorted(functions_of("tests/test_x.py", source)) == [
        "tests/test_x.py::TestGroup::test_b",
        "tests/test_x.py::test_a",
    ]
    assert functions_of("tests/test_bad.py", "def test_(:\n") == {}


def test_recorded_spec_splits_new_and_existing_tests_and_hides_the_new_ones(feature: ExtendCandidate) -> None:
    spec = extend_task_spec(feature, None, SOURCE)

    assert spec.tests is not None
    assert spec.tests.reward == "split"
    assert spec.tests.tracked_test_ids == feature.recorded_new_tests
    assert spec.tests.gate_test_ids == feature.recorded_existing_tests
    assert sorted(spec.tests.test_files) == ["tests/test_spread.py"]
    assert "tests/test_spread.py" not in spec.project_files
    assert sorted(spec.solution_files) == ["numstats.py"]
    assert spec.project_files["numstats.py"].decode() == feature.base_files["numstats.py"]
    # The instruction is the request plus the contract; no test leaks into it.
    assert spec.instruction.startswith(feature.request.strip())
    assert "`def variance(values)`: The population variance" in spec.instruction
    assert "assert" not in spec.instruction


def test_recorded_contract_names_new_and_changed_public_code_only() -> None:
    base = {"m.py": "def keep():\n    return 1\n\ndef change():\n    return 1\n"}
    changed = {
        "m.py": "def keep():\n    return 1\n\ndef change():\n    return 2\n\ndef _hidden():\n    pass\n\n"
        "class Shape:\n    '''A shape.'''\n    def area(self) -> float:\n        return 0.0\n",
        "tests/test_m.py": "def test_x():\n    pass\n",
    }
    text = recorded_contract(base, changed, ["old.py"])
    assert "`def change()`" in text and "`class Shape`: A shape." in text and "method `def area(self) -> float`" in text
    assert "keep" not in text and "_hidden" not in text and "test_m" not in text
    assert "`old.py` (removed)" in text


def test_no_recorded_new_test_is_no_new_tests_but_one_makes_a_task(feature: ExtendCandidate) -> None:
    none = feature.model_copy(update={"recorded_new_tests": []})
    with pytest.raises(CandidateRejected) as rejected:
        extend_task_spec(none, None, SOURCE)
    assert rejected.value.drop.reason == "no_new_tests"
    one = feature.model_copy(update={"recorded_new_tests": feature.recorded_new_tests[:1]})
    one_tests = extend_task_spec(one, None, SOURCE).tests
    assert one_tests is not None
    assert one_tests.tracked_test_ids == feature.recorded_new_tests[:1]


def test_llm_spec_tracks_the_models_test_module(feature: ExtendCandidate) -> None:
    module = "from numstats import mode\n\n" + "".join(
        f"def test_mode_{i}():\n    assert mode([{i}, {i}, 0]) == {i}\n\n" for i in range(1, 7)
    )
    spec = extend_task_spec(feature, ExtendProposal(contract="Add `mode(values)`.", test_module=module), SOURCE)

    path = proposal_test_path(feature)
    assert path == "tests/test_request_2.py"
    assert spec.tests is not None
    assert spec.tests.tracked_test_ids == [f"{path}::test_mode_{i}" for i in range(1, 7)]
    assert spec.tests.test_files == {path: module}  # the session's own test module is not hidden
    assert "Add `mode(values)`." in spec.instruction


def test_mutants_cover_only_the_changed_functions(feature: ExtendCandidate) -> None:
    lines = changed_lines(feature)["numstats.py"]
    source = feature.changed_files["numstats.py"].splitlines()
    assert source[min(line for line in lines if source[line - 1].strip()) - 1].startswith("def mode(")
    mutants = changed_code_mutants(feature)
    assert mutants and all(m.path == "numstats.py" and m.line in lines for m in mutants)
    assert not any("median" in source[m.line - 1] or "mean of an empty" in source[m.line - 1] for m in mutants)


def test_verifier_spec_keeps_gate_tests_to_split_mode() -> None:
    with pytest.raises(ValueError):
        VerifierSpec(runner="pytest", tracked_test_ids=["t.py::a"], gate_test_ids=["t.py::b"], reward="fraction")
    with pytest.raises(ValueError):
        VerifierSpec(runner="pytest", tracked_test_ids=["t.py::a"], gate_test_ids=["t.py::a"], reward="split")


# ----------------------------------------------------------------- calibration judgement


def _result(name: str, text: str, timed_out: bool = False) -> ProbeResult:
    return ProbeResult(name=name, exit_code=0, timed_out=timed_out, output_tail=text, seconds=1.0)


def _split(new: str, existing: str, **summary: list[str]) -> str:
    body = {"not_passed": [], "collect_errors": [], "not_loaded_before": [], **summary}
    return f"T2E-NEW {new}\nT2E-EXISTING {existing}\nT2E-SUMMARY {json.dumps(body)}\n"


def _mutation(statuses: str) -> str:
    report = {"baseline": "passed", "statuses": statuses, "total_s": 3.0}
    return MARKER + base64.b64encode(zlib.compress(json.dumps(report).encode())).decode()


def _results(base: str, reference: str, mutants: str | None) -> dict[str, ProbeResult]:
    results = {
        "base": _result("base", base),
        "reference_1": _result("reference_1", reference),
        "reference_2": _result("reference_2", reference),
    }
    if mutants is not None:
        results["mutants"] = _result("mutants", mutants)
    return results


def test_judge_keeps_a_discriminating_split_with_strong_tests(feature: ExtendCandidate) -> None:
    count = len(changed_code_mutants(feature))
    verdict = judge(
        feature, _results(_split("FFFFFE", "PPP"), _split("PPPPPP", "PPP"), _mutation("k" * (count - 1) + "s"))
    )
    assert verdict.drop is None
    assert (verdict.facts["discriminating_tests"], verdict.facts["mutants"]) == (6, count)
    assert verdict.facts["kill_rate"] == round((count - 1) / count, 3)


@pytest.mark.parametrize(
    ("base", "reference", "statuses", "reason"),
    [
        (_split("FFFFFF", "PPP"), "pytest crashed", "k", "calibration_failed"),
        (
            _split("MMMMMM", "PPP", not_loaded_before=["tests/test_a.py"]),
            _split("PPPPPP", "PPP"),
            "k",
            "tests_not_collected_before",
        ),
        (_split("FFFFFF", "PPP"), _split("PPPPPF", "PPP"), "k", "tests_fail_on_reference"),
        (_split("FFFFFF", "PFP"), _split("PPPPPP", "PPP"), "k", "existing_tests_fail"),
        (_split("FFFFFP", "PPP"), _split("PPPPPP", "PPP"), "k", "weak_tests"),
        (_split("", "PPP"), _split("", "PPP"), "k", "weak_tests"),
        (_split("FFFFFF", "PPP"), _split("PPPPPP", "PPP"), "s", "weak_tests"),
        (_split("FFFFFF", "PPP"), _split("PPPPPP", "PPP"), None, "calibration_failed"),
    ],
)
def test_judge_drops_with_the_first_reason_that_holds(
    feature: ExtendCandidate, base: str, reference: str, statuses: str | None, reason: str
) -> None:
    count = len(changed_code_mutants(feature))
    mutants = None if statuses is None else _mutation(statuses * count)
    verdict = judge(feature, _results(base, reference, mutants))
    assert verdict.drop is not None and verdict.drop.reason == reason


@pytest.mark.parametrize(
    ("new", "killed_share", "kept"),
    [(1, 0.8, True), (4, 0.75, False), (4, 0.8, True), (5, 0.5, True), (6, 0.45, False)],
)
def test_the_kill_rate_floor_is_80_percent_under_5_tests_and_50_from_5(
    feature: ExtendCandidate, new: int, killed_share: float, kept: bool
) -> None:
    mutants = changed_code_mutants(feature)
    assert len(mutants) >= 20  # fine-grained enough for the shares below
    killed = round(killed_share * len(mutants))
    statuses = "k" * killed + "s" * (len(mutants) - killed)
    verdict = judge(feature, _results(_split("F" * new, "PPP"), _split("P" * new, "PPP"), _mutation(statuses)))
    assert (verdict.drop is None) is kept
    if not kept:
        assert verdict.drop is not None
        assert verdict.drop.reason == "weak_tests" and f"with {new} new tests" in verdict.drop.detail


def test_a_change_with_few_mutants_is_weak_however_many_die(feature: ExtendCandidate) -> None:
    # One small function: a single test killing its few mutants proves little.
    small = feature.model_copy(
        update={
            "base_files": {"m.py": "X = 1\n"},
            "changed_files": {"m.py": "X = 1\n\ndef double(x):\n    return x * 2\n"},
        }
    )
    count = len(changed_code_mutants(small))
    assert 0 < count < 5
    verdict = judge(small, _results(_split("F", ""), _split("P", ""), _mutation("k" * count)))
    assert verdict.drop is not None and verdict.drop.reason == "weak_tests"
    assert verdict.drop.detail == f"the changed code has {count} mutants; at least 5 needed"
    spec = extend_task_spec(small.model_copy(update={"recorded_new_tests": ["tests/t.py::test_a"]}), None, SOURCE)
    assert "mutants" not in [probe.name for probe in calibration_plan(small, spec).probes]


def test_too_few_mutants_run_within_the_budget_is_calibration_failed(feature: ExtendCandidate) -> None:
    count = len(changed_code_mutants(feature))
    verdict = judge(feature, _results(_split("F", "PPP"), _split("P", "PPP"), _mutation("kkkk" + "n" * (count - 4))))
    assert verdict.drop is not None and verdict.drop.reason == "calibration_failed"
    assert verdict.drop.detail.startswith(f"4 of {count} mutants ran")


def test_tests_that_do_not_load_on_the_base_are_existing_tests_fail_with_the_error(feature: ExtendCandidate) -> None:
    error = "ImportError while loading conftest '/workspace/tests/conftest.py'.\nModuleNotFoundError: No module named 'yaml'"
    verdict = judge(feature, _results(error, _split("PPPPPP", "PPP"), _mutation("k")))
    assert verdict.drop is not None and verdict.drop.reason == "existing_tests_fail"
    assert "No module named 'yaml'" in verdict.drop.detail


def _mutation_dropping(statuses: str, dropped: list[str]) -> str:
    report = {"baseline": "passed", "statuses": statuses, "total_s": 3.0, "dropped": dropped}
    return MARKER + base64.b64encode(zlib.compress(json.dumps(report).encode())).decode()


def test_a_base_test_file_loading_nowhere_leaves_its_tests_out_of_the_regression_set(
    feature: ExtendCandidate, tmp_path: Path
) -> None:
    # Not the request's doing: the file loads neither before nor after it (a schema the
    # replay never saw). Its existing tests leave the regression set; the task stands.
    existing = feature.recorded_existing_tests
    path = existing[0].split("::", 1)[0]
    assert all(test_id.startswith(path + "::") for test_id in existing)
    error = f"{path}: E   FileNotFoundError: '/workspace/schemas/printer.schema.json'"
    # The new test file's own load error (a name the request adds) is not the left-out tests' reason.
    new_file_error = "tests/test_spread.py: E   ImportError: cannot import name 'spread'"
    base = _split(
        "FFFFFF",
        "M" * len(existing),
        not_loaded_before=[path],
        collect_errors=[path, "tests/test_spread.py"],
        errors=[error, new_file_error],
    )
    reference = _split("PPPPPP", "M" * len(existing), collect_errors=[path])
    count = len(changed_code_mutants(feature))
    verdict = judge(feature, _results(base, reference, _mutation_dropping("k" * count, existing)))
    assert verdict.drop is None, verdict.drop
    assert verdict.facts["existing_tests_left_out"] == existing and verdict.facts["regression_tests"] == 0
    assert error in str(verdict.facts["existing_tests_left_out_note"])
    assert "spread" not in str(verdict.facts["existing_tests_left_out_note"])

    family = ExtendFamily()
    spec = family.calibrated_spec(feature, family.task_spec(feature, None, SOURCE), verdict)
    assert spec.tests is not None and spec.tests.gate_test_ids == [] and spec.existing_tests_left_out == existing
    written = write_task(spec, tmp_path)
    metadata = tomllib.loads((written.path / "task.toml").read_text())["metadata"]
    assert metadata["existing_tests_left_out"] == existing
    assert not (written.path / "tests" / "traj2env" / "gate_ids.txt").read_text().strip()


def test_an_existing_test_failing_in_every_run_is_left_out_and_the_others_still_gate(feature: ExtendCandidate) -> None:
    failing = feature.recorded_existing_tests[1]
    count = len(changed_code_mutants(feature))
    letters = "PFPPPP"
    verdict = judge(
        feature,
        _results(_split("FFFFFF", letters), _split("PPPPPP", letters), _mutation_dropping("k" * count, [failing])),
    )
    assert verdict.drop is None, verdict.drop
    assert verdict.facts["existing_tests_left_out"] == [failing] and verdict.facts["regression_tests"] == 5
    spec = ExtendFamily().calibrated_spec(feature, extend_task_spec(feature, None, SOURCE), verdict)
    assert spec.tests is not None and spec.tests.gate_test_ids == [
        t for t in feature.recorded_existing_tests if t != failing
    ]


@pytest.mark.parametrize(
    ("base", "reference_1", "reference_2", "dropped", "reason"),
    [
        # Passes in one reference run: flaky, not environmental.
        ("PFPPPP", "PFPPPP", "PPPPPP", [], "tests_fail_on_reference"),
        # Passes on the base only: the request broke it.
        ("PPPPPP", "PFPPPP", "PFPPPP", [], "tests_fail_on_reference"),
        # Passed in the split runs but failed the mutation probe's baseline.
        ("PPPPPP", "PPPPPP", "PPPPPP", ["second"], "tests_fail_on_reference"),
    ],
)
def test_an_existing_test_that_passes_somewhere_is_not_left_out(
    feature: ExtendCandidate, base: str, reference_1: str, reference_2: str, dropped: list[str], reason: str
) -> None:
    count = len(changed_code_mutants(feature))
    ids = [feature.recorded_existing_tests[1] for _ in dropped]
    results = _results(_split("FFFFFF", base), _split("PPPPPP", reference_1), _mutation_dropping("k" * count, ids))
    results["reference_2"] = _result("reference_2", _split("PPPPPP", reference_2))
    verdict = judge(feature, results)
    assert verdict.drop is not None and verdict.drop.reason == reason
    assert "existing_tests_left_out" not in verdict.facts


def test_plan_runs_base_reference_twice_and_the_changed_code_mutants(feature: ExtendCandidate) -> None:
    spec = extend_task_spec(feature, None, SOURCE)
    plan = calibration_plan(feature, spec)
    assert [probe.name for probe in plan.probes] == ["base", "reference_1", "reference_2", "mutants"]
    base, reference = plan.probes[0], plan.probes[1]
    assert "/workspace/tests/test_spread.py" in base.files and "/workspace/numstats.py" not in base.files
    assert reference.files["/workspace/numstats.py"] == feature.changed_files["numstats.py"].encode()


# ----------------------------------------------------------------- the split verdict


def _verdict(tmp_path: Path, outcomes: dict[str, str], new: list[str], gate: list[str]) -> dict:
    # Test ids as pytest writes them (an id without "::" is a whole test file to the verdict).
    outcomes = {f"tests/test_feature.py::{name}": outcome for name, outcome in outcomes.items()}
    new, gate = [f"tests/test_feature.py::{name}" for name in new], [f"tests/test_feature.py::{name}" for name in gate]
    key = "ab" * 32
    lines = []
    records: list[dict[str, object]] = [
        {"kind": "report", "id": i, "when": "call", "outcome": o} for i, o in outcomes.items()
    ]
    records.append({"kind": "end", "exit_code": 0})
    for seq, record in enumerate(records, 1):
        body = json.dumps({**record, "seq": seq})
        lines.append(
            json.dumps({"body": body, "mac": hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()})
        )
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "tracked.txt").write_text("\n".join(new) + "\n")
    (tmp_path / "gate.txt").write_text("".join(f"{g}\n" for g in gate))
    (tmp_path / "sentinels.txt").write_text("")
    (tmp_path / "tamper.json").write_text('{"findings": []}')
    script = resources.files("traj2env_assets.verification") / "verifier_files" / "verdict.py"
    subprocess.run(
        [
            sys.executable,
            str(script),
            str(tmp_path / "results.jsonl"),
            key,
            str(tmp_path / "tracked.txt"),
            str(tmp_path / "sentinels.txt"),
            "split",
            str(tmp_path / "tamper.json"),
            str(tmp_path),
            str(tmp_path / "gate.txt"),
        ],
        check=True,
    )
    return json.loads((tmp_path / "verdict.json").read_text())


def test_split_reward_is_the_share_of_new_tests_when_every_existing_test_passes(tmp_path: Path) -> None:
    verdict = _verdict(
        tmp_path,
        {"n1": "passed", "n2": "failed", "n3": "passed", "n4": "passed", "e1": "passed"},
        ["n1", "n2", "n3", "n4"],
        ["e1"],
    )
    assert (verdict["reward"], verdict["reason"]) == (0.75, "fraction_passed")


@pytest.mark.parametrize("existing", ["failed", "skipped", None])
def test_split_reward_is_0_when_an_existing_test_does_not_pass(tmp_path: Path, existing: str | None) -> None:
    outcomes = {"n1": "passed", "n2": "passed"} | ({"e1": existing} if existing else {})
    verdict = _verdict(tmp_path, outcomes, ["n1", "n2"], ["e1"])
    assert (verdict["reward"], verdict["reason"]) == (0.0, "existing_tests_not_passed")


@pytest.mark.slow
def test_a_declared_dependency_without_a_wheel_is_dependencies_not_installable(
    feature: ExtendCandidate, tmp_path: Path
) -> None:
    # PyYAML 5.4.1 has no wheel for the image's CPython 3.13 (resolved on the host with uv).
    pinned = feature.model_copy(update={"base_files": feature.base_files | {"requirements.txt": "pyyaml==5.4.1\n"}})
    source = SOURCE.model_copy(update={"wheelhouse_dir": str(tmp_path / "wheels")})
    with pytest.raises(CandidateRejected) as rejected:
        extend_task_spec(pinned, None, source)
    assert rejected.value.drop.reason == "dependencies_not_installable"
    assert rejected.value.drop.detail.lower().startswith("no wheel for pyyaml")

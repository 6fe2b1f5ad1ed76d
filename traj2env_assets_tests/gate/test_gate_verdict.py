"""The gate's worker answering on a submission, and the verdict comparing as root
(verifier_files/verdict.py with the gate's files): honest code passes; the old code, an
always-equal object, a partial answer or a doubled answer do not; what the test process
reports can only lower the reward."""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from traj2env_assets.families.contract import ProbeResult
from traj2env_assets.gate.model import BehaviourGate, gate_files
from traj2env_assets.gate.runtime import WORKER, runtime_file
from traj2env_assets.stages.calibration.gate_judge import judge_gate
from traj2env_assets_tests.gate.probe_run import run_probe, write_project
from traj2env_assets_tests.gate.projects import AFTER, BEFORE

TEST = "tests/test_shop.py::"
FAILING = [TEST + "test_tags_are_clean", TEST + "test_tags_of_one_word"]
KEY = "ab" * 32
ALWAYS_EQUAL = (
    AFTER
    + """

class _Anything(list):
    def __eq__(self, other):
        return True


def tags(text):
    return _Anything()
"""
)
# Honest, written differently: a regular expression instead of split/strip.
HONEST = AFTER.replace(
    '    return [word.strip().lower() for word in text.split(",") if word.strip()]',
    "    import re\n    return [w.lower() for w in re.findall(r'[^,\\s][^,]*?(?=\\s*(?:,|$))', text)]",
)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> BehaviourGate:
    report = run_probe(tmp_path_factory.mktemp("probe"))
    result = ProbeResult(
        name="behaviour_gate", exit_code=0, timed_out=False, output_tail="", seconds=1.0, result=json.dumps(report)
    )
    judgement = judge_gate(result, tracked_tests=FAILING, fraction_reward=False)
    assert judgement.gate is not None
    return judgement.gate


def answer(tmp_path: Path, gate: BehaviourGate, module: str) -> Path:
    """The worker's answers for ``module`` (the shop project's solution file), as the verifier gets them."""
    work = tmp_path / "submission"
    write_project(work, module=module)
    cases, _ = gate_files(gate)
    (tmp_path / "cases.json").write_text(cases.model_dump_json())
    (tmp_path / WORKER).write_bytes(runtime_file(WORKER))
    answers = tmp_path / "answers.jsonl"
    subprocess.run(
        [
            "bash",
            "-c",
            'exec "$0" -I "$1" "$2" "$3" 3>"$4"',
            sys.executable,
            str(tmp_path / WORKER),
            str(work),
            str(tmp_path / "cases.json"),
            str(answers),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return answers


def verdict(
    tmp_path: Path,
    gate: BehaviourGate,
    answers: Path,
    outcomes: dict[str, str],
    mode: str = "check",
    tracked: list[str] = FAILING,
) -> dict:
    harness = tmp_path / "harness"
    harness.mkdir(exist_ok=True)
    source = resources.files("traj2env_assets.verification") / "verifier_files" / "verdict.py"
    (harness / "verdict.py").write_bytes(source.read_bytes())
    (harness / WORKER).write_bytes(runtime_file(WORKER))
    cases, expected = gate_files(gate)
    (harness / "gate_cases.json").write_text(cases.model_dump_json())
    (harness / "gate_expected.json").write_text(expected.model_dump_json())
    records: list[dict[str, object]] = [
        {"kind": "report", "id": i, "when": "call", "outcome": o} for i, o in outcomes.items()
    ]
    records.append({"kind": "end", "exit_code": 0})
    lines = []
    for seq, record in enumerate(records, 1):
        body = json.dumps({**record, "seq": seq})
        lines.append(
            json.dumps({"body": body, "mac": hmac.new(KEY.encode(), body.encode(), hashlib.sha256).hexdigest()})
        )
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "tracked.txt").write_text("\n".join(tracked) + "\n")
    (tmp_path / "gate_ids.txt").write_text("")
    (tmp_path / "sentinels.txt").write_text("")
    (tmp_path / "tamper.json").write_text('{"findings": []}')
    subprocess.run(
        [
            sys.executable,
            "-I",
            str(harness / "verdict.py"),
            str(tmp_path / "results.jsonl"),
            KEY,
            str(tmp_path / "tracked.txt"),
            str(tmp_path / "sentinels.txt"),
            mode,
            str(tmp_path / "tamper.json"),
            str(tmp_path),
            str(tmp_path / "gate_ids.txt"),
            str(harness / "gate_cases.json"),
            str(harness / "gate_expected.json"),
            str(answers),
        ],
        check=True,
        timeout=60,
    )
    return json.loads((tmp_path / "verdict.json").read_text())


def all_passed(gate: BehaviourGate) -> dict[str, str]:
    return dict.fromkeys([*gate.covered_tests, *gate.uncovered_tests], "passed")


@pytest.mark.parametrize("module", [AFTER, HONEST], ids=["reference", "honest_alternative"])
def test_a_correct_solution_passes_the_gate(tmp_path: Path, gate: BehaviourGate, module: str) -> None:
    result = verdict(tmp_path, gate, answer(tmp_path, gate, module), all_passed(gate))
    assert result["behaviour_gate"]["failed_count"] == 0, result["behaviour_gate"]
    assert (result["reward"], result["reason"]) == (1.0, "all_tracked_passed")


@pytest.mark.parametrize("module", [BEFORE, ALWAYS_EQUAL], ids=["old_code", "always_equal"])
def test_a_forged_in_process_pass_does_not_get_past_the_gate(tmp_path: Path, gate: BehaviourGate, module: str) -> None:
    result = verdict(tmp_path, gate, answer(tmp_path, gate, module), all_passed(gate))
    assert (result["reward"], result["reason"]) == (0.0, "behaviour_gate_failed")
    assert set(FAILING) <= set(result["behaviour_gate"]["failed_tests"])


def test_a_lookup_table_of_the_visible_tests_fails_the_generalisation_cases(
    tmp_path: Path, gate: BehaviourGate
) -> None:
    lookup = (
        BEFORE
        + """
_SEEN = {" Red, blue ,,GREEN": ["red", "blue", "green"], "Solo": ["solo"]}
_old_tags = tags


def tags(text):
    return list(_SEEN[text]) if text in _SEEN else _old_tags(text)
"""
    )
    result = verdict(tmp_path, gate, answer(tmp_path, gate, lookup), all_passed(gate))
    assert result["reward"] == 0.0
    failed = result["behaviour_gate"]["failed_cases"]
    assert failed and all(gate_case.kind == "generalisation" for gate_case in gate.cases if gate_case.id in failed)


def test_in_process_failures_still_lower_the_reward(tmp_path: Path, gate: BehaviourGate) -> None:
    outcomes = all_passed(gate) | {FAILING[0]: "failed"}
    result = verdict(tmp_path, gate, answer(tmp_path, gate, AFTER), outcomes)
    assert (result["reward"], result["reason"]) == (0.0, "check_failed")


def test_a_fraction_reward_counts_a_test_only_when_the_gate_agrees(tmp_path: Path, gate: BehaviourGate) -> None:
    half = AFTER.replace("def tags(text):\n", 'def tags(text):\n    if text == "Solo":\n        return ["Solo"]\n')
    result = verdict(tmp_path, gate, answer(tmp_path, gate, half), all_passed(gate), mode="fraction")
    assert result["tracked"][TEST + "test_tags_of_one_word"] == "failed_behaviour_gate"
    assert (result["reward"], result["reason"]) == (0.5, "behaviour_gate_failed")


def test_missing_or_doubled_answers_fail(tmp_path: Path, gate: BehaviourGate) -> None:
    answers = answer(tmp_path, gate, AFTER)
    lines = answers.read_text().splitlines()
    (tmp_path / "doubled.jsonl").write_text("\n".join([*lines, lines[0]]) + "\n")
    (tmp_path / "partial.jsonl").write_text("\n".join(lines[1:]) + "\n")
    for name in ("doubled.jsonl", "partial.jsonl", "absent.jsonl"):
        case_dir = tmp_path / name.split(".")[0]
        case_dir.mkdir()
        source = tmp_path / name
        if source.exists():
            shutil.copy(source, case_dir / "answers.jsonl")
        result = verdict(case_dir, gate, case_dir / "answers.jsonl", all_passed(gate))
        assert result["reward"] == 0.0 and result["behaviour_gate"]["failed_count"] >= 1, name


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        (1, 1.0, True),
        (0.1 + 0.2, 0.3, True),
        (2, 3, False),
        (True, 1, False),
        (1, True, False),
        ({"t": "list", "v": [1, 2]}, {"t": "tuple", "v": [1, 2]}, False),
        ({"t": "dict", "v": [["a", 1], ["b", 2]]}, {"t": "dict", "v": [["b", 2], ["a", 1]]}, True),
        ({"t": "object", "c": "P", "v": {"x": 1}}, {"t": "object", "c": "P", "v": {"x": 1, "extra": 2}}, True),
        ({"t": "object", "c": "P", "v": {"x": 1}}, {"t": "object", "c": "Q", "v": {"x": 1}}, False),
        ({"t": "object", "c": "P", "v": {"x": 1}}, {"t": "object", "c": "P", "v": {}}, False),
        ("a", {"t": "object", "c": "str", "v": {}}, False),
    ],
)
def test_values_compare_as_data(expected: object, actual: object, same: bool) -> None:
    from traj2env_assets.gate.runtime.gate_worker import values_match

    assert values_match(expected, actual) is same

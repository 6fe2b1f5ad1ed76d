"""Which recorded and perturbed cases the gate keeps, and what it covers.

A case is usable when the worker answered every call on the reference, twice alike, with
values the gate can carry. A recorded case makes its test *covered*. A generalisation case
is kept when it stays in the tests' domain (the reference raises no exception class the
recorded calls never raised) and rewards work: no degenerate submission (every call
returning ``None``, ``[]``, ``()``, ``{}``, ``set()``, ``0``, ``""``, ``False``, ``True``,
the first argument or its first item, or raising anything) answers it. For a task whose
reward is a fraction, a tracked test whose own recorded case a degenerate submission
answers rewards nothing and is no longer tracked. A covered task needs at least
``MIN_DISCRIMINATING_CASES`` kept generalisation cases that the code before the change
answers differently: without them a submission that hard-codes the visible tests and
falls back to the old code would pass (``gate_not_discriminating``).

A case whose test can observe printing is answered with what each call printed, and a call
that prints something is never degenerate (a stub that hard-codes a test's banner prints
nothing for perturbed arguments). Printing the reference does not repeat alike (a
timestamp, an address) is dropped from that case's expected answers: no test can assert on
it exactly either.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from traj2env_assets.docker_engine.probe import ProbeResult
from traj2env_assets.drops import Drop, Fact
from traj2env_assets.gate.model import Answer, BehaviourGate, GateCase, Step
from traj2env_assets.gate.runtime.gate_worker import answers_match, values_match
from traj2env_assets.stages.calibration.gate_probe import parse_gate_report

MIN_DISCRIMINATING_CASES = 3
_UNCOVERED_SHOWN = 10
_EMPTY_VALUES: tuple[object, ...] = (
    None,
    0,
    0.0,
    "",
    False,
    True,
    {"t": "list", "v": []},
    {"t": "tuple", "v": []},
    {"t": "dict", "v": []},
    {"t": "set", "v": []},
    {"t": "frozenset", "v": []},
)


class GateJudgement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gate: BehaviourGate | None = None
    drop: Drop | None = None
    untracked: list[str] = Field(default_factory=list)
    """Tracked tests that reward nothing (a degenerate submission passes them)."""
    facts: dict[str, Fact] = Field(default_factory=dict)


def _degenerate_values(step: Step) -> list[object]:
    values = list(_EMPTY_VALUES)
    args = step.get("args") or []
    if args:
        first = args[0]
        values.append(first)
        if isinstance(first, dict) and first.get("t") in ("list", "tuple") and first.get("v"):
            values.append(first["v"][0])
    return values


def _printed(answer: Answer) -> bool:
    printed = answer.get("p") or {}
    return any(printed.get(stream) for stream in ("out", "err", "log"))


def step_is_degenerate(answer: Answer, step: Step) -> bool:
    if _printed(answer):
        return False
    if "x" in answer:
        return True
    mutated = any(
        answer.get(key) is not None and answer.get(key) != given
        for key, given in (("a", step.get("args", [])), ("k", step.get("kwargs", {})))
    )
    return not mutated and any(values_match(value, answer.get("r")) for value in _degenerate_values(step))


def case_is_degenerate(answers: Sequence[Answer], steps: Sequence[Step]) -> bool:
    """A degenerate submission (one behaviour per call, chosen from the family) answers it."""
    return all(step_is_degenerate(answer, step) for answer, step in zip(answers, steps, strict=True))


def _unprinted(answers: list[Answer]) -> list[Answer]:
    return [{key: value for key, value in answer.items() if key != "p"} for answer in answers]


def _usable(case: dict, answers: dict[str, dict[str, list | None]]) -> list[Answer] | None:
    first = answers.get("reference", {}).get(case["id"])
    again = answers.get("reference_again", {}).get(case["id"])
    steps = case["steps"]
    if not isinstance(first, list) or len(first) != len(steps) or any("e" in answer for answer in first):
        return None
    if answers_match(first, again, steps)[0]:
        return first
    # Printing that differs between two runs of the reference is not behaviour to judge.
    if isinstance(again, list) and answers_match(_unprinted(first), _unprinted(again), steps)[0]:
        return _unprinted(first)
    return None


def _raised(answers: Sequence[Answer]) -> set[str]:
    return {answer["x"][0] for answer in answers if answer.get("x")}


def judge_gate(
    result: ProbeResult, *, tracked_tests: Sequence[str], fraction_reward: bool, excluded: Sequence[str] = ()
) -> GateJudgement:
    """The gate a task gets from its probe, or none (coverage 0) with the reason in the facts.
    Coverage is the share of ``tracked_tests`` with a recorded case; every test of the run
    that has one is judged by the gate. ``excluded``: test ids the verifier does not run
    (calibration left them out or deselected them) get no case, since it would never be
    answered. Named ids, not a selection to match: a selection of paths or of nothing
    (the whole check) would need pytest's own matching, and a miss there would strip the
    gate from every test."""
    report = parse_gate_report(result)
    if isinstance(report, str):
        return GateJudgement(facts={"gate_coverage": 0.0, "gate_absent": report[:500]})
    if excluded:
        out = set(excluded)
        report = report.model_copy(
            update={
                "tests": {test: info for test, info in report.tests.items() if test not in out},
                "cases": [case for case in report.cases if case.get("test") not in out],
            }
        )
    judged = set(report.tests) | set(tracked_tests)
    recorded: dict[str, tuple[dict, list[Answer]]] = {}
    uncovered: dict[str, str] = {
        test: str(info.get("why") or "not covered") for test, info in report.tests.items() if not info.get("covered")
    }
    nondeterministic = 0
    for case in report.cases:
        if case.get("kind") != "recorded":
            continue
        usable = _usable(case, report.answers)
        if usable is None:
            uncovered[case["test"]] = "its calls do not replay alike twice on the reference"
            nondeterministic += 1
        else:
            recorded[case["test"]] = (case, usable)
    # Judged tests the recording never saw (a selection naming a test the run did not reach).
    for test in judged:
        if test not in recorded and test not in uncovered:
            uncovered[test] = "the recording run did not see it"
    domain = set().union(*(_raised(answers) for _, answers in recorded.values())) if recorded else set()
    kept: list[GateCase] = []
    expected: dict[str, list[Answer]] = {}
    counts = {"degenerate": 0, "out_of_domain": 0, "discriminating": 0, "generalisation": 0}
    for case, usable in recorded.values():
        kept.append(
            GateCase(
                id=case["id"],
                test=case["test"],
                kind="recorded",
                steps=case["steps"],
                observe=case.get("observe") or [],
            )
        )
        expected[case["id"]] = usable
    for case in report.cases:
        if case.get("kind") != "generalisation" or case["test"] not in recorded:
            continue
        answers = _usable(case, report.answers)
        if answers is None:
            nondeterministic += 1
            continue
        if not _raised(answers) <= domain:
            counts["out_of_domain"] += 1
            continue
        if case_is_degenerate(answers, case["steps"]):
            counts["degenerate"] += 1
            continue
        before = report.answers.get("before", {}).get(case["id"])
        counts["discriminating"] += not answers_match(answers, before, case["steps"])[0]
        counts["generalisation"] += 1
        kept.append(
            GateCase(
                id=case["id"],
                test=case["test"],
                kind="generalisation",
                steps=case["steps"],
                observe=case.get("observe") or [],
            )
        )
        expected[case["id"]] = answers
    untracked = sorted(
        test
        for test in tracked_tests
        if fraction_reward and test in recorded and case_is_degenerate(recorded[test][1], recorded[test][0]["steps"])
    )
    coverage = sum(test in recorded for test in tracked_tests) / len(tracked_tests) if tracked_tests else 0.0
    facts: dict[str, Fact] = {
        "gate_coverage": round(coverage, 3),
        "gate_cases": len(kept),
        "gate_generalisation_cases": counts["generalisation"],
        "gate_discriminating_cases": counts["discriminating"],
        "gate_cases_degenerate": counts["degenerate"],
        "gate_cases_out_of_domain": counts["out_of_domain"],
        "gate_cases_nondeterministic": nondeterministic,
        "gate_uncovered_tests": [f"{test}: {why}" for test, why in sorted(uncovered.items())][:_UNCOVERED_SHOWN],
        "tests_rewarding_nothing": untracked,
    }
    if not recorded:
        return GateJudgement(facts=facts | {"gate_absent": "no judged test's calls could be recorded"})
    if counts["discriminating"] < MIN_DISCRIMINATING_CASES:
        detail = (
            f"{counts['discriminating']} generalisation cases tell the change from the code before it "
            f"(at least {MIN_DISCRIMINATING_CASES} needed; {counts['generalisation']} kept)"
        )
        return GateJudgement(drop=Drop(reason="gate_not_discriminating", detail=detail), facts=facts)
    if untracked and len(untracked) == len(tracked_tests):
        detail = "every tracked test is passed by a degenerate submission: " + ", ".join(untracked[:5])
        return GateJudgement(drop=Drop(reason="weak_tests", detail=detail), facts=facts, untracked=untracked)
    gate = BehaviourGate(
        roots=report.roots,
        cases=kept,
        expected=expected,
        covered_tests=sorted(recorded),
        uncovered_tests=dict(sorted(uncovered.items())),
    )
    return GateJudgement(gate=gate, untracked=untracked, facts=facts)

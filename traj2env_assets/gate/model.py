"""The behaviour gate a task carries, and the two files the verifier reads it from.

``tests/traj2env/gate_cases.json`` (:class:`GateCases`) is what the worker is given: the
import roots and each case's calls, inputs only. ``tests/traj2env/gate_expected.json``
(:class:`GateExpectations`) is root's alone: for each case the test it belongs to and the
reference's answers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CaseKind = Literal["recorded", "generalisation"]
Observed = Literal["output", "logs", "exit"]
"""What of solution code's printing a case's test can observe, so the worker answers it too."""
Step = dict[str, Any]
"""One call as the worker replays it (see ``runtime/gate_worker.py``)."""
Answer = dict[str, Any]
"""One call's answer: ``{"r": value}`` or ``{"x": [class names], "m": message}``, plus
the arguments after the call (``"a"``, ``"k"``) when they are mutable, and what the call
printed or the code it exited with (``"p"``) when the case observes it."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GateCase(_Strict):
    id: str
    test: str
    """The test (pytest node id) the calls were recorded from, or perturbed from."""
    kind: CaseKind
    steps: list[Step] = Field(min_length=1)
    observe: list[Observed] = Field(default_factory=list)


class GateExpectation(_Strict):
    test: str
    kind: CaseKind
    answers: list[Answer]


class BehaviourGate(_Strict):
    roots: list[str]
    """Folders (relative to the project) solution modules are imported from."""
    cases: list[GateCase] = Field(min_length=1)
    expected: dict[str, list[Answer]]
    """Case id -> the reference's answers."""
    covered_tests: list[str]
    """Tests whose outcome the gate decides (each has a recorded case)."""
    uncovered_tests: dict[str, str] = Field(default_factory=dict)
    """Judged tests outside the gate, with why (judged in-process only)."""

    def coverage(self, judged_tests: list[str]) -> float:
        """The share of ``judged_tests`` whose outcome the gate decides."""
        if not judged_tests:
            return 0.0
        return sum(test in self.covered_tests for test in judged_tests) / len(judged_tests)


class GateCases(_Strict):
    """``gate_cases.json``: the worker's input."""

    roots: list[str]
    cases: list[dict[str, Any]]


class GateExpectations(_Strict):
    """``gate_expected.json``: root's half."""

    covered_tests: list[str]
    cases: dict[str, GateExpectation]


def gate_files(gate: BehaviourGate) -> tuple[GateCases, GateExpectations]:
    cases = GateCases(
        roots=gate.roots,
        cases=[{"id": case.id, "steps": case.steps, "observe": case.observe} for case in gate.cases],
    )
    expected = GateExpectations(
        covered_tests=gate.covered_tests,
        cases={
            case.id: GateExpectation(test=case.test, kind=case.kind, answers=gate.expected[case.id])
            for case in gate.cases
        },
    )
    return cases, expected

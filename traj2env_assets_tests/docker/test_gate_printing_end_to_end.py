"""A repair task whose tests check printed output, from a session of our own making through
the whole pipeline (real Docker engine): the till's fix changes a return value, a banner
(``capsys``) and a log record (``caplog``). The published matrix holds (reference 1.0,
no-op 0.0), and a submission that fixes the return value but prints the banner and logs
the record only for the tests' own arguments scores 0: the gate answers the printed and
logged calls for perturbed arguments too, with what they print."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.verification.controls import (
    AgentAction,
    Control,
    NoopControl,
    ReferenceControl,
)
from traj2env_assets.verification.trial import TrialTask, run_matrix
from traj2env_assets_tests.example_run import run_examples
from traj2env_assets_tests.gate import printing_session as session
from traj2env_assets_tests.gate.projects import TILL_SPECIAL_CASED

pytestmark = [pytest.mark.docker, pytest.mark.slow]


class SpecialCased(Control):
    name = "printed_special_case"

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(files={f"/workspace/{session.MODULE}": TILL_SPECIAL_CASED.encode()})


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    root = tmp_path_factory.mktemp("printing")
    session.write_printing_session(root / "sessions" / "till.jsonl")
    report = run_examples(root, source=root / "sessions", families=["repair"], rerun=False).first
    [candidate] = [c for c in report["candidates"] if c["family"] == "repair"]
    assert candidate["kept"], candidate
    return candidate, Path(candidate["published_path"])


def test_the_task_is_published_with_its_printing_judged(published: tuple[dict, Path]) -> None:
    candidate, task = published
    rewards = dict(candidate["trial_rewards"])
    assert rewards.pop("reference") == 1.0 and rewards.pop("noop") == 0.0
    assert rewards and set(rewards.values()) == {0.0}
    assert (task / "tests" / "traj2env" / "tracked_ids.txt").read_text().split() == session.TRACKED
    cases = json.loads((task / "tests" / "traj2env" / "gate_cases.json").read_text())["cases"]
    expected = json.loads((task / "tests" / "traj2env" / "gate_expected.json").read_text())["cases"]
    observing = {expected[case["id"]]["test"]: case["observe"] for case in cases if case["observe"]}
    assert observing == {session.PRINTED[0]: ["output"], session.PRINTED[1]: ["logs"]}
    # Perturbed printing cases are kept: a call returning None that prints is work.
    kinds = {(case["test"], case["kind"]) for case in expected.values()}
    assert {(test, "generalisation") for test in session.PRINTED} <= kinds


def test_special_casing_the_printed_tests_scores_0(engine: DockerEngine, published: tuple[dict, Path]) -> None:
    _, task = published
    image = engine.build(task / "environment")
    matrix = run_matrix(
        engine,
        TrialTask(image=image.tag, task_dir=task),
        [ReferenceControl(), NoopControl(), SpecialCased()],
        parallelism=2,
    )
    rewards = matrix.rewards()
    assert rewards == {"reference": 1.0, "noop": 0.0, "printed_special_case": 0.0}, matrix.results
    verdict = next(r for r in matrix.results if r.control == "printed_special_case").verdict or {}
    # The tests passed where they ran; only the gate saw the old printing.
    assert verdict["reason"] == "behaviour_gate_failed", verdict
    assert verdict["behaviour_gate"]["failed_tests"] == session.PRINTED, verdict

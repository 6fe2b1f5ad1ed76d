"""The behaviour gate on real containers: a repair task of our own making (the shop project
of ``traj2env_assets_tests/gate/projects.py``) calibrated in its image, written with its
gate, and tried. The reference and an honest alternative score 1; submissions that pass
the tests in the test process without the fix score 0 because the gate's worker, running
as ``solver``, answers for the code itself; one that tries to read the expected answers
from the worker finds them closed to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.image_build import BuiltImage
from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec
from traj2env_assets.verification.controls import (
    DEFAULT_CONTROLS,
    AgentAction,
    Control,
    NoopControl,
    ReferenceControl,
)
from traj2env_assets.verification.trial import MatrixResult, TrialTask, run_matrix
from traj2env_assets_tests.docker.gating import write_gated_task
from traj2env_assets_tests.gate.projects import AFTER, BEFORE, TESTS
from traj2env_assets_tests.gate.test_gate_verdict import HONEST

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TEST = "tests/test_shop.py::"
FAILING = [TEST + "test_tags_are_clean", TEST + "test_tags_of_one_word"]

# Solution code that, wherever it runs, tries to read the gate's expected answers and the
# cases, and answers each call with the reference's answer when it finds it.
READ_THE_ANSWERS = (
    BEFORE
    + """

def _answer_from_the_gate(name, args):
    import json
    import sys
    try:
        with open("/tests/traj2env/gate_expected.json") as handle:
            expected = json.load(handle)["cases"]
        with open(sys.argv[2]) as handle:
            cases = json.load(handle)["cases"]
        codec = sys.modules["__main__"].Codec()
    except (OSError, ValueError, KeyError, IndexError, AttributeError):
        return None
    given = [codec.encode_argument(value) for value in args]
    for case in cases:
        for index, step in enumerate(case["steps"]):
            if step.get("call", "").endswith(":" + name) and step.get("args") == given:
                answer = expected[case["id"]]["answers"][index]
                return (codec.decode(answer["r"]),) if "r" in answer else None
    return None


_buggy_tags = tags


def tags(text):
    found = _answer_from_the_gate("tags", [text])
    return found[0] if found else _buggy_tags(text)
"""
)


class Submission(Control):
    def __init__(self, name: str, module: str, expected_reward: float = 0.0) -> None:
        self.name, self._module, self.expected_reward = name, module, expected_reward

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(files={"/workspace/shop.py": self._module.encode()})


def shop_task() -> TaskSpec:
    return TaskSpec(
        family="repair",
        task_id="shop-gate",
        instruction="`tags` must strip, lower-case and drop empty tags. Fix `shop.py`.",
        base_image="python",
        project_files={"shop.py": BEFORE.encode(), "tests/test_shop.py": TESTS.encode()},
        solution_files={"shop.py": AFTER.encode()},
        tests=VerifierSpec(
            runner="pytest", tracked_test_ids=FAILING, run_targets=["tests"], reward="check", timeout_sec=120
        ),
        source_trace="shop-session",
        agent_timeout_sec=120,
        verifier_timeout_sec=240,
        build_timeout_sec=300,
    )


@pytest.fixture(scope="module")
def gated(engine: DockerEngine, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuiltImage, dict]:
    written, judgement = write_gated_task(engine, shop_task(), tmp_path_factory.mktemp("gate-dataset"))
    return written.path, engine.build(written.environment_dir), judgement.facts


@pytest.fixture(scope="module")
def matrix(engine: DockerEngine, gated: tuple[Path, BuiltImage, dict]) -> MatrixResult:
    task_dir, image, _ = gated
    controls = [
        ReferenceControl(),
        NoopControl(),
        Submission("honest_alternative", HONEST, 1.0),
        Submission("read_the_answers", READ_THE_ANSWERS),
        *(control for control in DEFAULT_CONTROLS if control.name in ("expected_from_caller", "always_equal")),
    ]
    return run_matrix(engine, TrialTask(image=image.tag, task_dir=task_dir), controls, parallelism=2)


def test_calibration_in_the_image_covers_every_tracked_test(gated: tuple[Path, BuiltImage, dict]) -> None:
    task_dir, _, facts = gated
    assert facts["gate_coverage"] == 1.0 and facts["gate_discriminating_cases"] >= 3
    toml = (task_dir / "task.toml").read_text()
    assert "[metadata.behaviour_gate]" in toml and "coverage = 1.0" in toml
    expected = json.loads((task_dir / "tests" / "traj2env" / "gate_expected.json").read_text())
    cases = json.loads((task_dir / "tests" / "traj2env" / "gate_cases.json").read_text())
    assert set(expected["cases"]) == {case["id"] for case in cases["cases"]}
    # The worker's input carries calls only, never an answer.
    assert '"r":' not in json.dumps(cases) and '"answers"' not in json.dumps(cases)


def test_the_reference_and_an_honest_alternative_score_1(matrix: MatrixResult) -> None:
    rewards = matrix.rewards()
    assert rewards["reference"] == 1.0 and rewards["honest_alternative"] == 1.0, matrix.results


@pytest.mark.parametrize("control", ["noop", "expected_from_caller", "always_equal", "read_the_answers"])
def test_passing_in_the_test_process_without_the_fix_scores_0(matrix: MatrixResult, control: str) -> None:
    result = next(result for result in matrix.results if result.control == control)
    verdict = result.verdict or {}
    assert result.reward == 0.0, verdict
    # The gate's worker found the old behaviour: the expected answers were closed to it.
    assert set(FAILING) <= set(verdict["behaviour_gate"]["failed_tests"]), verdict
    if control == "expected_from_caller":
        # The tests passed where they ran; only the gate saw the old behaviour.
        assert verdict["reason"] == "behaviour_gate_failed", verdict

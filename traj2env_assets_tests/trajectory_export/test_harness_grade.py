"""The harness's grade: only a verifier that finished and left its verdict has one."""

from __future__ import annotations

import json

import pytest

from traj2env_assets.docker_engine.sandbox import ExecOutcome
from traj2env_assets.trajectory_export.harness import graded_reward
from traj2env_assets.trajectory_export.task_index import HarnessTask
from traj2env_assets.verification.verifier import VerifierRun, parse_reward

TASK = HarnessTask(
    task_id="t",
    family="repair",
    source_trace="s",
    split="train",
    agent_timeout_sec=60,
    verifier_timeout_sec=60,
    build_timeout_sec=60,
    workdir="/workspace",
    submission_path="/workspace",
)


def _run(logs: dict[str, bytes], exit_code: int | None = 0, timed_out: bool = False) -> VerifierRun:
    verdict = json.loads(logs["verdict.json"]) if "verdict.json" in logs else None
    return VerifierRun(
        outcome=ExecOutcome(exit_code=exit_code, timed_out=timed_out, output_tail="", seconds=1.0),
        reward=None if timed_out else parse_reward(logs.get("reward.txt")),
        verdict=verdict,
        output_tail="",
        logs=logs,
    )


def test_a_finished_verifier_with_its_verdict_is_graded_zero_included() -> None:
    assert graded_reward(_run({"reward.txt": b"0\n", "verdict.json": b'{"reward": 0}'}), TASK) == (0.0, "")
    assert graded_reward(_run({"reward.txt": b"1\n", "verdict.json": b'{"reward": 1.0}'}), TASK) == (1.0, "")


@pytest.mark.parametrize(
    ("logs", "exit_code", "timed_out", "why"),
    [
        # test.sh wrote its leading 0, then crashed: the 0 is not a grade.
        ({"reward.txt": b"0\n"}, 137, False, "exit code 137"),
        # The script ran to its end but the verdict step died before writing anything.
        ({"reward.txt": b"0\n"}, 0, False, "no verdict.json"),
        ({"reward.txt": b"0\n", "verdict.json": b'{"reward": 0}'}, None, True, "timed out"),
        ({"reward.txt": b"0\n", "verdict.json": b'{"reward": 1}'}, 0, False, "is not reward.txt's"),
        ({"reward.txt": b"2\n", "verdict.json": b'{"reward": 2}'}, 0, False, "outside [0, 1]"),
    ],
)
def test_no_grade_without_a_finished_verifier_and_its_verdict(
    logs: dict[str, bytes], exit_code: int | None, timed_out: bool, why: str
) -> None:
    reward, problem = graded_reward(_run(logs, exit_code, timed_out), TASK)
    assert reward is None and why in problem

"""``traj2env rollout``: Harbor's terminus-2 against a fake of the model provider's HTTP API,
the solve rates and flags it records in the manifest and the cards, and their merge rules.

No model provider is reachable from the test machine: the model is the local fake
OpenAI-compatible server (``llm/fake_provider.py``), scripted as terminus-2 expects its
model to answer. For one task it sends the keystrokes that fix the file; for the other it
gives up at once.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docker
import pytest
from harbor.models.trial.result import TrialResult
from pydantic import ValidationError

from traj2env_assets.cli import main
from traj2env_assets.docker_engine.base_images import ensure_base_images
from traj2env_assets.harbor.dataset import ModelRollouts, RolloutRun, TaskRollouts, read_manifest, write_dataset
from traj2env_assets.harbor.validate import HarborJobFailed
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.layout import CARD_FILE
from traj2env_assets.quality_loop.rollout import TrialCount, count_trials, merge_rollouts, record_rollouts, rollout_flag
from traj2env_assets.stages.publish.card import ROLLOUTS_HEADING, with_rollouts
from traj2env_assets_tests.docker.sample_tasks import python_task
from traj2env_assets_tests.llm.fake_provider import FakeProvider, FakeReply

MODEL = "openai/scripted-model"
SOLVABLE = "`tests/test_calc.py::test_add` fails: `add(2, 3)` returns -1. Fix `calc.py`."
GIVE_UP = "`tests/test_calc.py::test_add` fails in this copy too. Fix `calc.py` here as well."
FIX_KEYSTROKES = "sed -i 's/a - b/a + b/' /workspace/calc.py\n"


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """Two tiny Python repair tasks: ``calc-fix`` (with a card) and ``calc-stuck`` (none yet)."""
    destination = tmp_path / "dataset"
    write_task(python_task("calc-fix").model_copy(update={"instruction": SOLVABLE}), destination)
    stuck = python_task("calc-stuck", marker="stuck").model_copy(update={"instruction": GIVE_UP})
    write_task(stuck, destination)
    (destination / "calc-fix" / CARD_FILE).write_text("# calc-fix\n\n## Provenance\n\n- session: `s`\n")
    write_dataset(destination)
    return destination


def _models(*runs: tuple[int, int]) -> ModelRollouts:
    merged: list[TaskRollouts] = []
    for index, (attempts, solved) in enumerate(runs):
        count = TrialCount(task_id="t", agent="terminus-2", model=MODEL, attempts=attempts, solved=solved)
        merged = merge_rollouts(merged, [count], f"2026-01-0{index + 1}T00:00:00+00:00")
    return merged[0].models[0]


def test_flags_need_no_solve_anywhere_or_a_solve_everywhere() -> None:
    never, always, mixed = _models((3, 0)), _models((2, 2)), _models((2, 1))
    other_always = always.model_copy(update={"model": "openai/other"})
    assert rollout_flag([never]) == "never_solved"
    assert rollout_flag([always, other_always]) == "always_solved"
    assert rollout_flag([always, never]) is None, "one model solved it: not never_solved; one failed: not always"
    assert rollout_flag([mixed]) is None
    only_errors = ModelRollouts(
        agent="terminus-2",
        model=MODEL,
        attempts=0,
        solved=0,
        solve_rate=None,
        runs=[RolloutRun(at="2026-01-01T00:00:00+00:00", attempts=0, solved=0, errors=2)],
    )
    assert rollout_flag([only_errors]) is None, "trials that all failed say nothing about the task"
    assert rollout_flag([only_errors, never]) == "never_solved"


def test_a_rerun_adds_its_attempts_and_flags_are_recomputed() -> None:
    first = merge_rollouts(
        [],
        [
            TrialCount(task_id="b", agent="terminus-2", model=MODEL, attempts=2, solved=2),
            TrialCount(task_id="a", agent="terminus-2", model=MODEL, attempts=2, solved=0, errors=1),
        ],
        "2026-01-01T00:00:00+00:00",
    )
    assert [(task.task_id, task.flag) for task in first] == [("a", "never_solved"), ("b", "always_solved")]
    second = merge_rollouts(
        first,
        [
            TrialCount(task_id="b", agent="terminus-2", model=MODEL, attempts=2, solved=1),
            TrialCount(task_id="b", agent="terminus-2", model="openai/other", attempts=1, solved=1),
        ],
        "2026-01-02T00:00:00+00:00",
    )
    a, b = second
    assert a == first[0], "a task this run did not try keeps its record"
    [other, ours] = b.models  # by agent, then model
    assert (ours.attempts, ours.solved, ours.solve_rate) == (4, 3, 0.75)
    assert [run.at[:10] for run in ours.runs] == ["2026-01-01", "2026-01-02"]
    assert (other.model, other.solve_rate) == ("openai/other", 1.0)
    assert b.flag is None
    assert a.models[0].runs[0].errors == 1 and a.models[0].attempts == 2


def _trial(task: str, model: str, reward: float | None, exception: str | None = None) -> TrialResult:
    """The fields of Harbor's ``result.json`` that a rollout reads."""
    return TrialResult.model_validate(
        {
            "task_name": f"traj2env/{task}",
            "trial_name": f"{task}__x",
            "trial_uri": "file:///jobs/x",
            "task_id": {"path": f"/dataset/{task}"},
            "task_checksum": "c",
            "config": {"task": {"path": f"/dataset/{task}"}, "agent": {"name": "terminus-2", "model_name": model}},
            "agent_info": {"name": "terminus-2", "version": "2.0.0"},
            "verifier_result": {"rewards": {"reward": reward}} if reward is not None else None,
            "exception_info": {
                "exception_type": exception,
                "exception_message": "it failed",
                "exception_traceback": "",
                "occurred_at": "2026-01-01T00:00:00Z",
            }
            if exception
            else None,
        }
    )


def test_trials_are_counted_per_task_and_model_and_a_failed_run_is_an_error_not_an_attempt() -> None:
    counts = count_trials(
        "terminus-2",
        [
            _trial("calc", MODEL, 1.0),
            _trial("calc", MODEL, 0.5),
            _trial("calc", MODEL, 0.0, exception="AgentTimeoutError"),
            _trial("calc", MODEL, None, exception="RuntimeError"),
            # The model server never answered; Harbor still verified the untouched container.
            _trial("calc", MODEL, 0.0, exception="InternalServerError"),
            _trial("calc", "openai/other", 1.0),
        ],
    )
    assert [(c.task_id, c.model, c.attempts, c.solved, c.errors) for c in counts] == [
        ("calc", "openai/other", 1, 1, 0),
        ("calc", MODEL, 3, 1, 2),
    ]
    assert counts[1].error == "InternalServerError: it failed"


def test_totals_that_do_not_sum_the_runs_are_refused() -> None:
    with pytest.raises(ValidationError, match="totals do not sum the runs"):
        ModelRollouts(
            agent="terminus-2",
            model=MODEL,
            attempts=3,
            solved=1,
            solve_rate=1 / 3,
            runs=[RolloutRun(at="2026-01-01T00:00:00+00:00", attempts=2, solved=1)],
        )


def test_record_writes_manifest_and_cards_and_a_rewrite_keeps_them(dataset: Path) -> None:
    counts = [
        TrialCount(task_id="calc-fix", agent="terminus-2", model=MODEL, attempts=2, solved=2),
        TrialCount(task_id="calc-stuck", agent="terminus-2", model=MODEL, attempts=2, solved=0),
    ]
    record_rollouts(dataset, counts, datetime(2026, 1, 1, tzinfo=UTC))
    record_rollouts(dataset, counts[1:], datetime(2026, 1, 2, tzinfo=UTC))
    manifest = read_manifest(dataset)
    rollouts = {task.task_id: task for task in manifest.rollouts}
    assert rollouts["calc-fix"].flag == "always_solved" and rollouts["calc-stuck"].flag == "never_solved"
    assert rollouts["calc-stuck"].models[0].attempts == 4
    card = (dataset / "calc-stuck" / CARD_FILE).read_text()
    assert card.startswith("# calc-stuck\n") and card.count(ROLLOUTS_HEADING) == 1
    assert f"| terminus-2 | `{MODEL}` | 4 | 0 | 0.00 | 2026-01-02T00:00:00+00:00 |" in card
    assert "flag: **never_solved**" in card
    fix_card = (dataset / "calc-fix" / CARD_FILE).read_text()
    assert "## Provenance" in fix_card and "flag: **always_solved**" in fix_card
    # The manifest's content hashes are of the tasks with their new cards.
    assert write_dataset(dataset).tasks == manifest.tasks
    assert read_manifest(dataset).rollouts == manifest.rollouts, "a publishing run keeps the rollouts"


def test_the_card_section_is_replaced_in_place() -> None:
    [task] = merge_rollouts([], [TrialCount(task_id="t", agent="a", model="m", attempts=1, solved=1)], "then")
    card = "# t\n\n## Rollouts\n\nold figures\n\n## Provenance\n\n- session: `s`\n"
    updated = with_rollouts(card, task)
    assert "old figures" not in updated and updated.index(ROLLOUTS_HEADING) < updated.index("## Provenance")
    assert with_rollouts(updated, task) == updated


def test_the_command_refuses_a_folder_without_a_manifest_and_no_attempts(dataset: Path) -> None:
    assert main(["rollout", str(dataset.parent / "empty"), "--agent", "terminus-2", "--model", MODEL]) == 2
    assert main(["rollout", str(dataset), "--agent", "terminus-2", "--model", MODEL, "-k", "0"]) == 2


def test_the_command_records_attempts_and_exits_1_when_trials_failed(
    dataset: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def rollouts(*args: Any, **kwargs: Any) -> list[TrialCount]:
        return [
            TrialCount(
                task_id="calc-fix",
                agent="terminus-2",
                model=MODEL,
                attempts=1,
                solved=1,
                errors=1,
                error="InternalServerError: connection refused",
            )
        ]

    monkeypatch.setattr("traj2env_assets.quality_loop.rollout_command.run_rollouts", rollouts)
    argv = ["rollout", str(dataset), "--agent", "terminus-2", "--model", MODEL]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "connection refused" in captured.out and "1 trials failed and were not counted" in captured.err
    [task] = read_manifest(dataset).rollouts
    assert (task.task_id, task.models[0].attempts, task.models[0].runs[0].errors) == ("calc-fix", 1, 1)

    def second_agent_fails(dataset: Path, agent: str, *args: Any, **kwargs: Any) -> list[TrialCount]:
        if agent == "other-agent":
            raise HarborJobFailed("harbor run exited 1")
        return [TrialCount(task_id="calc-stuck", agent=agent, model=MODEL, attempts=1, solved=0)]

    monkeypatch.setattr("traj2env_assets.quality_loop.rollout_command.run_rollouts", second_agent_fails)
    assert main([*argv, "--agent", "other-agent"]) == 2
    recorded = {task.task_id: task for task in read_manifest(dataset).rollouts}
    assert recorded["calc-fix"] == task, "an earlier run's record stays"
    assert [(m.agent, m.attempts) for m in recorded["calc-stuck"].models] == [("terminus-2", 1)], (
        "the agent whose job ended is recorded; nothing of the one whose harbor run failed"
    )


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else " ".join(part.get("text", "") for part in content or [])


def _terminus_reply(request: dict[str, Any]) -> FakeReply:
    """terminus-2's JSON answer: for SOLVABLE, the fix on the first turn; else no command.
    The task is marked complete on every turn (terminus-2 asks once to confirm)."""
    messages = request["messages"]
    first_turn = not any(message["role"] == "assistant" for message in messages)
    fixes = first_turn and SOLVABLE in _text(messages[0])
    commands = [{"keystrokes": FIX_KEYSTROKES, "duration": 0.5}] if fixes else []
    answer = {
        "analysis": "scripted",
        "plan": "fix" if fixes else "give up",
        "commands": commands,
        "task_complete": True,
    }
    return FakeReply(content=json.dumps(answer))


@pytest.mark.docker
@pytest.mark.slow
def test_terminus_2_rollouts_record_a_solved_and_a_never_solved_task(
    dataset: Path, fake_provider: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # terminus-2 needs tmux in the task image: the base stand-ins carry it (rebuilt if older).
    ensure_base_images(docker.from_env())
    # The fake of the provider's HTTP API: OpenAI chat completions on 127.0.0.1.
    fake_provider.route = _terminus_reply
    argv = [
        "rollout",
        str(dataset),
        "--agent",
        "terminus-2",
        "--model",
        MODEL,
        "-k",
        "2",
        "-n",
        "2",
        "--base-url",
        fake_provider.api_base,
        "--jobs-dir",
        str(tmp_path / "jobs"),
    ]
    assert main(argv) == 0, capsys.readouterr()
    table = capsys.readouterr().out
    assert "calc-fix" in table and "never_solved" in table and "always_solved" in table

    rollouts = {task.task_id: task for task in read_manifest(dataset).rollouts}
    [solved] = rollouts["calc-fix"].models
    [stuck] = rollouts["calc-stuck"].models
    assert (solved.agent, solved.model, solved.attempts, solved.solved, solved.solve_rate) == (
        "terminus-2",
        MODEL,
        2,
        2,
        1.0,
    )
    assert (stuck.attempts, stuck.solved, stuck.solve_rate) == (2, 0, 0.0)
    assert rollouts["calc-stuck"].flag == "never_solved" and rollouts["calc-fix"].flag == "always_solved"
    assert fake_provider.request_count >= 8, "two turns (answer, confirmation) per trial"

    fix_card = (dataset / "calc-fix" / CARD_FILE).read_text()
    assert f"| terminus-2 | `{MODEL}` | 2 | 2 | 1.00 |" in fix_card
    stuck_card = (dataset / "calc-stuck" / CARD_FILE).read_text()
    assert f"| terminus-2 | `{MODEL}` | 2 | 0 | 0.00 |" in stuck_card and "**never_solved**" in stuck_card

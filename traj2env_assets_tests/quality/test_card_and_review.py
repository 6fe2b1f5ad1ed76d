"""The task card written at publish, and ``traj2env review`` on a dataset of hand-made tasks."""

from __future__ import annotations

import json
import threading
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from harbor.models.task.config import TaskConfig

from traj2env_assets.cli import main
from traj2env_assets.harbor.dataset import DatasetManifest, read_manifest, write_dataset
from traj2env_assets.harbor.validation import harbor_problems
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.layout import CARD_FILE
from traj2env_assets.lifecycle.status import (
    CalibrationRecord,
    CandidateStatus,
    TrialsRecord,
)
from traj2env_assets.quality.effort import SessionEffort
from traj2env_assets.quality_loop import review as review_module
from traj2env_assets.quality_loop.review import UnknownTaskError, record_review, review_rows
from traj2env_assets.quality_loop.rollout import TrialCount, record_rollouts
from traj2env_assets.stages.publish.atomic_publish import publish_task
from traj2env_assets.stages.publish.card import LICENCE_NOTE, render_card
from traj2env_assets.stages.report.funnel import FUNNEL_CSV
from traj2env_assets.stages.report.report import REPORT_FILE, CandidateRecord, RunReport, write_run_report
from traj2env_assets_tests.docker.sample_tasks import node_task, python_task

EFFORT = SessionEffort(
    window="fail_to_pass",
    agent_steps=4,
    commands=3,
    failed_commands=2,
    edits=1,
    wall_seconds=90.0,
    files_changed=1,
    lines_changed=2,
)


def _status(task_id: str) -> CandidateStatus:
    return CandidateStatus(
        family="repair",
        partition_key="claude-code-abc",
        task_id=task_id,
        reward_kind="binary",
        calibration=CalibrationRecord(
            key="k", passed=True, facts={"failing_tests": 1, "mutants_killed": "3/4", "calibration_seconds": 12.3}
        ),
        trials=TrialsRecord(key="k", passed=True, rewards={"reference": 1.0, "noop": 0.0}, file="trials.json"),
    )


def test_the_card_shows_request_change_figures_matrix_and_provenance(tmp_path: Path) -> None:
    staged = write_task(python_task().model_copy(update={"session_effort": EFFORT}), tmp_path / "staging").path
    card = render_card(staged, _status("calc-fix"))

    assert card.startswith("# calc-fix\n")
    assert "**repair** · difficulty **easy** · reward `binary` · label **unverified**" in card
    assert "> `tests/test_calc.py::test_add` fails" in card
    assert "- reference files: `calc.py`" in card
    assert "- 1 files, 2 lines changed" in card and "3 commands (2 failed), 1 edits, 1.5 minutes" in card
    assert "- failing_tests: 1" in card and "- mutants_killed: 3/4" in card
    # A timing measures the run, not the task: two runs of the same work publish one card.
    assert "calibration_seconds" not in card
    assert "| `noop` | 0.0 |" in card and "| `reference` | 1.0 |" in card
    assert "- session: `sample-python-session`" in card and LICENCE_NOTE in card


def test_a_long_failure_is_cut_and_the_code_block_it_opened_is_closed(tmp_path: Path) -> None:
    failure = "\n".join(f"E   line {n} of a long traceback" for n in range(60))
    spec = python_task().model_copy(update={"instruction": f"The check fails:\n\n```\n{failure}\n```\n"})
    card = render_card(write_task(spec, tmp_path / "staging").path, _status("calc-fix"))

    request = card.split("## The request\n\n", 1)[1].split("\n\n## What changed", 1)[0]
    assert "line 59" not in request and "…" in request
    assert [line for line in request.splitlines() if line.startswith("> ```")] == ["> ```", "> ```"]


def test_publish_adds_the_card_to_the_copy_it_vets_and_harbor_accepts_the_task(tmp_path: Path) -> None:
    staged = write_task(python_task(), tmp_path / "staging").path
    seen: list[bool] = []

    def vet(copy: Path) -> None:
        seen.append((copy / CARD_FILE).is_file())

    outcome = publish_task(staged, tmp_path / "dataset", "calc-fix", vet=vet, added={CARD_FILE: "# calc-fix\n"})
    assert outcome.status == "published" and seen == [True]
    assert not (staged / CARD_FILE).exists(), "the staged task (the trials' input) is unchanged"
    assert harbor_problems(Path(outcome.path)) == []


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    destination = tmp_path / "dataset"
    write_task(python_task(), destination)
    write_task(node_task(), destination)
    (destination / "calc-fix" / CARD_FILE).write_text("# calc-fix\n")
    write_dataset(destination)
    return destination


def _label(task_dir: Path) -> str:
    text = (task_dir / "task.toml").read_text()
    TaskConfig.model_validate_toml(text)  # still a task Harbor reads
    return tomllib.loads(text)["metadata"]["repo2env"]["evaluation"]["label"]


def test_accept_labels_the_task_verified_and_the_manifest_keeps_every_decision(dataset: Path) -> None:
    before = {task.task_id: task.content_hash for task in read_manifest(dataset).tasks}
    record_review(dataset, "calc-fix", "accept", note="clear failure, real fix", reviewer="ana")
    assert _label(dataset / "calc-fix") == "verified"
    manifest = read_manifest(dataset)
    [review] = manifest.reviews
    assert (review.task_id, review.decision, review.note, review.reviewer) == (
        "calc-fix",
        "accept",
        "clear failure, real fix",
        "ana",
    )
    after = {task.task_id: task.content_hash for task in manifest.tasks}
    assert after["calc-fix"] != before["calc-fix"] and after["slug-fix"] == before["slug-fix"]

    record_review(dataset, "calc-fix", "reject", note="the instruction names the fix")
    assert _label(dataset / "calc-fix") == "unverified"
    assert [r.decision for r in read_manifest(dataset).reviews] == ["accept", "reject"]
    # A later run that rewrites the manifest keeps the reviews.
    write_dataset(dataset)
    assert [r.decision for r in read_manifest(dataset).reviews] == ["accept", "reject"]
    rows = {row.task_id: row for row in review_rows(dataset)}
    assert rows["calc-fix"].decision == "reject" and rows["calc-fix"].card == dataset / "calc-fix" / CARD_FILE
    assert rows["slug-fix"].decision is None and rows["slug-fix"].card is None

    with pytest.raises(UnknownTaskError):
        record_review(dataset, "no-such-task", "accept")


def test_a_review_and_a_rollout_at_once_keep_both_changes(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two writers of the manifest at once (``review`` and ``rollout``, or a run's dataset
    asset): the review pauses after rebuilding the manifest, where the rollout would write
    its counts in between and the review's final write would drop them without the lock."""
    rebuilt, rollout_done = threading.Event(), threading.Event()

    def pausing_write_dataset(*args: Any, **kwargs: Any) -> DatasetManifest:
        manifest = write_dataset(*args, **kwargs)
        rebuilt.set()
        rollout_done.wait(timeout=2)  # Under the lock the rollout cannot get in: it waits.
        return manifest

    monkeypatch.setattr(review_module, "write_dataset", pausing_write_dataset)
    review = threading.Thread(target=record_review, args=(dataset, "calc-fix", "accept"))
    review.start()
    assert rebuilt.wait(timeout=30)
    counts = [TrialCount(task_id="slug-fix", agent="terminus-2", model="openai/a", attempts=1, solved=1)]
    record_rollouts(dataset, counts, datetime(2026, 1, 2, tzinfo=UTC))
    rollout_done.set()
    review.join(timeout=30)
    manifest = read_manifest(dataset)
    assert [r.task_id for r in manifest.reviews] == ["calc-fix"]
    assert [t.task_id for t in manifest.rollouts] == ["slug-fix"]


def test_review_command_lists_and_records(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", str(dataset)]) == 0
    listing = capsys.readouterr().out
    assert "calc-fix" in listing and "slug-fix" in listing and "unverified" in listing
    assert main(["review", str(dataset), "--accept", "slug-fix", "--note", "ok", "--reviewer", "bo"]) == 0
    assert _label(dataset / "slug-fix") == "verified"
    assert json.loads((dataset / "dataset.json").read_text())["reviews"][0]["reviewer"] == "bo"
    assert main(["review", str(dataset), "--reject", "nope"]) == 2
    assert main(["review", str(dataset.parent / "empty")]) == 2


def test_reviews_and_rollouts_reach_the_report_and_its_funnel_without_a_new_run(dataset: Path) -> None:
    def published(task_id: str) -> CandidateRecord:
        return CandidateRecord(
            family="repair",
            task_id=task_id,
            partition_key=f"k-{task_id}",
            status="published",
            kept=True,
            reached="publish",
            reward_kind="binary",
            published_path=str(dataset / task_id),
        )

    dropped = CandidateRecord(
        family="repair",
        task_id="calc-fix",
        partition_key="k-copy",
        status="dropped",
        kept=False,
        reached=None,
        dropped_at="candidates",
        reason="duplicate_of",
        duplicate_of="calc-fix",
        reward_kind="binary",
    )
    report = RunReport(
        generated_at="now", workspace="/w", candidates=[published("calc-fix"), published("slug-fix"), dropped]
    )
    write_run_report(report, dataset)

    record_review(dataset, "calc-fix", "accept")
    at = datetime(2026, 1, 1, tzinfo=UTC)
    record_rollouts(
        dataset,
        [
            TrialCount(task_id="calc-fix", agent="terminus-2", model="openai/a", attempts=2, solved=0),
            TrialCount(task_id="slug-fix", agent="terminus-2", model="openai/a", attempts=2, solved=1),
        ],
        at,
    )

    written = RunReport.model_validate_json((dataset / REPORT_FILE).read_text())
    by_key = {(c.task_id, c.kept): c for c in written.candidates}
    assert by_key[("calc-fix", True)].review == "accept" and by_key[("calc-fix", True)].rollout_flag == "never_solved"
    assert by_key[("calc-fix", True)].rollout_solve_rate == 0.0
    assert by_key[("slug-fix", True)].review is None and by_key[("slug-fix", True)].rollout_solve_rate == 0.5
    # The copy dropped as calc-fix's duplicate shares its id but is not the published task.
    assert by_key[("calc-fix", False)].review is None and by_key[("calc-fix", False)].rollout_flag is None
    assert (written.funnel["published"], written.funnel["accepted"], written.funnel["solved_in_rollouts"]) == (2, 1, 1)
    funnel = pd.read_csv(dataset / FUNNEL_CSV, index_col="stage")
    assert (funnel.loc["accepted", "repair"], funnel.loc["solved_in_rollouts", "repair"]) == (1, 1)

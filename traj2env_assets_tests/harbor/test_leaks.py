"""Sibling leaks (traj2env_assets.harbor.leaks) between task directories as the writer
writes them: a hidden test another task shows is found whatever its name, formatting or
comments; unrelated and trivial tests are not; at publish, the hider goes, and the trials
stage drops it earlier only where publish would (traj2env_assets.stages.hidden_tests_leak)."""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.families.contract import Drop
from traj2env_assets.harbor.leaks import leaks_between, task_tests
from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.layout import Workspace
from traj2env_assets.lifecycle.status import (
    CandidateRef,
    CandidateStatus,
    ImageRecord,
    Stage,
    save_status,
    staged_task_dir,
)
from traj2env_assets.stages.hidden_tests_leak import HIDDEN_TESTS_LEAK, early_leaks
from traj2env_assets.stages.publish.publishing import publish

SHOWN = """from shop import tags


def test_tags_are_clean():
    assert tags(" Red, blue ,,GREEN") == ["red", "blue", "green"]


def test_trivial():
    pass
"""
# The same test renamed, reformatted and commented, and a trivial one: only the first leaks.
HIDDEN = """from shop import tags


def test_renamed(  ):
    # a comment changes nothing
    assert tags( " Red, blue ,,GREEN" ) == [ "red", "blue", "green" ]


def test_trivial_too():
    pass


def test_hidden_only():
    assert tags("a,b") == ["a", "b"]
"""


def _task(task_id: str, project: dict[str, str], hidden: dict[str, str]) -> TaskSpec:
    return TaskSpec(
        family="repair",
        task_id=task_id,
        instruction="Fix it.",
        base_image="python",
        project_files={path: text.encode() for path, text in project.items()},
        solution_files={"shop.py": b"def tags(text):\n    return []\n"},
        tests=VerifierSpec(runner="pytest", tracked_test_ids=["tests/test_shop.py::test_x"], test_files=hidden),
        source_trace="session",
    )


def test_a_hidden_test_another_task_shows_is_a_leak_both_ways(tmp_path: Path) -> None:
    shows = write_task(_task("shows", {"shop.py": "", "tests/test_shop.py": SHOWN}, {}), tmp_path)
    hides = write_task(_task("hides", {"CONTRACT.md": "tags"}, {"tests/test_hidden.py": HIDDEN}), tmp_path)
    shown, hidden = task_tests(shows.path), task_tests(hides.path)
    assert list(hidden.hidden.values()) == [
        "tests/test_hidden.py::test_renamed",
        "tests/test_hidden.py::test_hidden_only",
    ]
    assert leaks_between(hidden, [shown]) == ["tests/test_hidden.py::test_renamed (hidden here) is shown by shows"]
    assert leaks_between(shown, [hidden]) == ["tests/test_hidden.py::test_renamed (hidden by hides) is shown here"]


def test_tasks_with_different_tests_do_not_leak(tmp_path: Path) -> None:
    other = SHOWN.replace('" Red, blue ,,GREEN"', '"x,y"').replace('"red", "blue", "green"', '"x", "y"')
    shows = write_task(_task("shows", {"shop.py": "", "tests/test_shop.py": other}, {}), tmp_path)
    hides = write_task(_task("hides", {"CONTRACT.md": "tags"}, {"tests/test_hidden.py": HIDDEN}), tmp_path)
    assert leaks_between(task_tests(hides.path), [task_tests(shows.path)]) == []


def test_a_test_quoted_in_the_instruction_is_shown(tmp_path: Path) -> None:
    spec = _task("quotes", {"shop.py": ""}, {}).model_copy(
        update={"instruction": "Make this pass:\n\n```python\n" + SHOWN + "```\n"}
    )
    quotes = write_task(spec, tmp_path)
    hides = write_task(_task("hides", {"CONTRACT.md": "tags"}, {"tests/test_hidden.py": HIDDEN}), tmp_path)
    assert len(leaks_between(task_tests(hides.path), [task_tests(quotes.path)])) == 1


def _staged(workspace: Workspace, partition: str, spec: TaskSpec, reached: Stage) -> CandidateStatus:
    ref = CandidateRef(family=spec.family, partition_key=partition, task_id=spec.task_id)
    staged = staged_task_dir(workspace, ref)
    write_task(spec, staged.parent)
    return save_status(
        workspace,
        CandidateStatus(
            family=ref.family,
            partition_key=partition,
            task_id=ref.task_id,
            reward_kind="binary",
            reached=reached,
            image=ImageRecord(spec_key="spec", staged_path=str(staged), tag="traj2env/env:x"),
        ),
    )


def test_the_hider_is_dropped_whichever_partition_publishes_first(tmp_path: Path) -> None:
    """Partitions publish one at a time: the task that hides a test a live candidate of
    another partition shows goes, even when that candidate has not reached publish yet."""
    workspace = Workspace(root=tmp_path / "workspace")
    destination = tmp_path / "dataset"
    hider = _staged(
        workspace,
        "session-a",
        _task("hides", {"CONTRACT.md": "tags"}, {"tests/test_hidden.py": HIDDEN}),
        reached="trials",
    )
    shower = _staged(
        workspace, "session-b", _task("shows", {"shop.py": "", "tests/test_shop.py": SHOWN}, {}), reached="proposals"
    )

    [dropped] = publish(workspace, destination, [hider])
    assert dropped.drop is not None and dropped.drop.reason == "hidden_tests_leak"
    assert "is shown by shows" in dropped.drop.detail

    [published] = publish(workspace, destination, [save_status(workspace, shower.passed("trials"))])
    assert published.drop is None and (destination / "shows" / "task.toml").is_file()
    assert not (destination / "hides").exists()


def test_a_dropped_candidate_hides_nothing_from_the_others(tmp_path: Path) -> None:
    workspace = Workspace(root=tmp_path / "workspace")
    hider = _staged(
        workspace,
        "session-a",
        _task("hides", {"CONTRACT.md": "tags"}, {"tests/test_hidden.py": HIDDEN}),
        reached="trials",
    )
    shower = _staged(
        workspace, "session-b", _task("shows", {"shop.py": "", "tests/test_shop.py": SHOWN}, {}), reached="proposals"
    )
    save_status(workspace, shower.dropped("calibration", Drop(reason="weak_tests", detail="")))

    [published] = publish(workspace, tmp_path / "dataset", [hider])
    assert published.drop is None and published.reached == "publish"


def _hider_and_shower(workspace: Workspace, shower_reached: Stage) -> tuple[CandidateStatus, CandidateStatus]:
    hider = _staged(
        workspace, "session-a", _task("hides", {"CONTRACT.md": "tags"}, {"tests/test_hidden.py": HIDDEN}), "calibration"
    )
    shower = _staged(
        workspace, "session-a", _task("shows", {"shop.py": "", "tests/test_shop.py": SHOWN}, {}), shower_reached
    )
    return hider, shower


def test_before_trials_a_hider_goes_once_its_shower_passed_its_trials_as_publish_would(tmp_path: Path) -> None:
    """The trials stage drops a hider publish would drop (its shower of the same trajectory
    passed its trials) without running its matrix; publish, given the hider, drops it the same way."""
    workspace, destination = Workspace(root=tmp_path / "workspace"), tmp_path / "dataset"
    hider, shower = _hider_and_shower(workspace, "trials")

    early = early_leaks(workspace, destination, [hider], [hider, shower])
    assert early.after_showers == set() and list(early.drops) == [hider.ref]
    assert early.drops[hider.ref].reason == HIDDEN_TESTS_LEAK
    assert "test_renamed (hidden here) is shown by shows" in early.drops[hider.ref].detail

    at_publish, shown = publish(workspace, destination, [save_status(workspace, hider.passed("trials")), shower])
    assert at_publish.drop == early.drops[hider.ref] and shown.drop is None


def test_before_trials_a_hider_goes_after_its_undecided_shower_and_runs_if_the_shower_failed(tmp_path: Path) -> None:
    workspace, destination = Workspace(root=tmp_path / "workspace"), tmp_path / "dataset"
    hider, shower = _hider_and_shower(workspace, "calibration")

    planned = early_leaks(workspace, destination, [hider, shower], [hider, shower])
    assert planned.after_showers == {hider.ref} and planned.drops == {}

    # The second wave: its shower failed, so publish would keep the hider; it runs its matrix.
    failed = save_status(workspace, shower.dropped("trials", Drop(reason="trials_failed", detail="")))
    assert early_leaks(workspace, destination, [hider], [hider, failed]) == ({}, set())

    [published] = publish(workspace, destination, [save_status(workspace, hider.passed("trials"))])
    assert published.drop is None and (destination / "hides" / "task.toml").is_file()


def test_before_trials_a_shower_of_another_run_decides_the_hider_only_once_published(tmp_path: Path) -> None:
    """A live shower outside the run (another batch's) may still be dropped before the
    hider's publish: the hider waits for the second wave, and goes only if the shower was
    published by then; otherwise it runs its matrix and publish decides."""
    workspace, destination = Workspace(root=tmp_path / "workspace"), tmp_path / "dataset"
    hider = _staged(
        workspace, "session-a", _task("hides", {"CONTRACT.md": "tags"}, {"tests/test_hidden.py": HIDDEN}), "calibration"
    )
    shower = _staged(workspace, "session-b", _task("shows", {"shop.py": "", "tests/test_shop.py": SHOWN}, {}), "trials")
    assert early_leaks(workspace, destination, [hider], [hider]) == ({}, {hider.ref})

    publish(workspace, destination, [shower])
    assert list(early_leaks(workspace, destination, [hider], [hider]).drops) == [hider.ref]


def test_before_trials_a_candidate_that_leaks_against_a_published_task_goes(tmp_path: Path) -> None:
    """Both ways: a published task is never taken back, so publish would drop the candidate
    whatever happens to the others."""
    workspace, destination = Workspace(root=tmp_path / "workspace"), tmp_path / "dataset"
    write_task(_task("published-shows", {"shop.py": "", "tests/test_shop.py": SHOWN}, {}), destination)
    hider = _staged(
        workspace, "session-a", _task("hides", {"CONTRACT.md": "tags"}, {"tests/test_hidden.py": HIDDEN}), "calibration"
    )
    assert list(early_leaks(workspace, destination, [hider], [hider]).drops) == [hider.ref]

    other_destination = tmp_path / "other-dataset"
    write_task(_task("published-hides", {"CONTRACT.md": "tags"}, {"tests/test_hidden.py": HIDDEN}), other_destination)
    shower = _staged(
        workspace, "session-b", _task("shows", {"shop.py": "", "tests/test_shop.py": SHOWN}, {}), "calibration"
    )
    [(ref, drop)] = early_leaks(workspace, other_destination, [shower], [shower]).drops.items()
    assert ref == shower.ref and "(hidden by published-hides) is shown here" in drop.detail

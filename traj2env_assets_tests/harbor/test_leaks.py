"""Sibling leaks (traj2env_assets.harbor.leaks) between task directories as the writer
writes them: a hidden test another task shows is found whatever its name, formatting or
comments; unrelated and trivial tests are not; at publish, the hider goes."""

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

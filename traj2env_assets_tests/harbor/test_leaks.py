"""Sibling leaks (traj2env_assets.harbor.leaks) between task directories as the writer
writes them: a hidden test another task shows is found whatever its name, formatting or
comments; unrelated and trivial tests are not."""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.harbor.leaks import leaks_between, task_tests
from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec
from traj2env_assets.harbor.writer import write_task

SHOWN = '''from shop import tags


def test_tags_are_clean():
    assert tags(" Red, blue ,,GREEN") == ["red", "blue", "green"]


def test_trivial():
    pass
'''
# The same test renamed, reformatted and commented, and a trivial one: only the first leaks.
HIDDEN = '''from shop import tags


def test_renamed(  ):
    # a comment changes nothing
    assert tags( " Red, blue ,,GREEN" ) == [ "red", "blue", "green" ]


def test_trivial_too():
    pass


def test_hidden_only():
    assert tags("a,b") == ["a", "b"]
'''


def _task(task_id: str, project: dict[str, str], hidden: dict[str, str]) -> TaskSpec:
    return TaskSpec(
        family="repair", task_id=task_id, instruction="Fix it.", base_image="python",
        project_files={path: text.encode() for path, text in project.items()},
        solution_files={"shop.py": b"def tags(text):\n    return []\n"},
        tests=VerifierSpec(runner="pytest", tracked_test_ids=["tests/test_shop.py::test_x"], test_files=hidden),
        source_trace="session",
    )


def test_a_hidden_test_another_task_shows_is_a_leak_both_ways(tmp_path: Path) -> None:
    shows = write_task(_task("shows", {"shop.py": "", "tests/test_shop.py": SHOWN}, {}), tmp_path)
    hides = write_task(_task("hides", {"CONTRACT.md": "tags"}, {"tests/test_hidden.py": HIDDEN}), tmp_path)
    shown, hidden = task_tests(shows.path), task_tests(hides.path)
    assert list(hidden.hidden.values()) == ["tests/test_hidden.py::test_renamed", "tests/test_hidden.py::test_hidden_only"]
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

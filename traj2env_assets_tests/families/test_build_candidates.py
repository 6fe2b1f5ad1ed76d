"""Mining build candidates: the project where the first request ends, its start state, the
session's own passing tests, and the reasons a candidate goes no further."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from traj2env_assets.families.build.candidates import mine_build_candidates
from traj2env_assets.families.build.family import BuildFamily
from traj2env_assets.families.contract import CandidateRejected, TaskSource
from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets_tests.families.conftest import EXAMPLES, record_for
from traj2env_assets_tests.families.toy_pipeline import ToyPipeline
from traj2env_assets_tests.llm.fake_provider import FakeProvider
from traj2env_assets_tests.replay.builders import SessionBuilder

CALC = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
SOURCE = TaskSource(partition_key="s", source_model=None, org="local")


def _record(builder: SessionBuilder, tmp_path: Path) -> ReplayRecord:
    write_record(replay_trajectory(builder.build()), tmp_path / "record")
    return ReplayRecord.load(tmp_path / "record")


def _session() -> SessionBuilder:
    return (
        SessionBuilder()
        .user("Build calc.py with add() and a test.")
        .call("Write", {"file_path": "calc.py", "content": CALC})
        .call("Write", {"file_path": "tests/test_calc.py", "content": TEST})
        .bash("python -m pytest -q", "1 passed in 0.01s")
    )


def test_the_project_is_taken_where_the_first_request_ends(tmp_path: Path) -> None:
    session = (
        _session()
        .user("Now add sub().")
        .call(
            "Edit",
            {
                "file_path": "calc.py",
                "old_string": "return a + b",
                "new_string": "return a + b\n\n\ndef sub(a, b):\n    return a - b",
            },
        )
    )
    [mined] = mine_build_candidates(_record(session, tmp_path), "sess")
    assert mined.drop is None and mined.task_id == "sess-build"
    assert mined.candidate.request == "Build calc.py with add() and a test."
    assert mined.candidate.reference_files == {"calc.py": CALC, "tests/test_calc.py": TEST}
    assert mined.candidate.session_tests == ["tests/test_calc.py"]
    assert mined.candidate.start_files == {}


def test_files_read_before_being_written_are_the_start_state(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .user("Add calc.py next to the README.")
        .call("Read", {"file_path": "README.md"}, "     1\tHello\n", file_content="Hello\n")
        .call("Write", {"file_path": "calc.py", "content": CALC})
    )
    [mined] = mine_build_candidates(_record(session, tmp_path), "sess")
    assert mined.candidate.start_files == {"README.md": "Hello\n"}
    assert mined.drop is None


def test_a_python_module_that_existed_before_is_not_a_built_project(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .user("Add sub() to calc.py.")
        .call("Read", {"file_path": "calc.py"}, "", file_content=CALC)
        .call("Write", {"file_path": "util.py", "content": "X = 1\n"})
    )
    [mined] = mine_build_candidates(_record(session, tmp_path), "sess")
    assert mined.drop is not None and mined.drop.reason == "project_not_created"
    assert "calc.py" in mined.drop.detail


def test_a_lost_file_drops_the_candidate(tmp_path: Path) -> None:
    session = _session().call("Edit", {"file_path": "calc.py", "old_string": "no such text", "new_string": "x"})
    [mined] = mine_build_candidates(_record(session, tmp_path), "sess")
    assert mined.drop is not None and mined.drop.reason == "reference_files_lost"


def test_lost_files_the_project_does_not_need_are_left_out_and_the_task_says_so(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .user("Build calc.py with add() and a test.")
        .call("Read", {"file_path": "docs/notes.md"}, "     1\tNotes\n", file_content="Notes\n")
        .call("Write", {"file_path": "calc.py", "content": CALC})
        .call("Write", {"file_path": "tests/test_calc.py", "content": TEST})
        .call("Write", {"file_path": "README.md", "content": "# calc\n"})
        .call("Edit", {"file_path": "README.md", "old_string": "not there", "new_string": "x"})
        .call("Edit", {"file_path": ".gitleaks.toml", "old_string": "a", "new_string": "b"})
        .call("Edit", {"file_path": "docs/notes.md", "old_string": "not there", "new_string": "x"})
        .bash("python -m pytest -q", "1 passed in 0.01s")
    )
    [mined] = mine_build_candidates(_record(session, tmp_path), "sess")
    assert mined.drop is None
    left_out = [".gitleaks.toml", "README.md", "docs/notes.md"]
    assert mined.candidate.left_out_files == left_out and mined.facts["left_out_files"] == left_out
    # Out of the reference and of the start state: solve.sh neither writes nor deletes them.
    assert mined.candidate.reference_files == {"calc.py": CALC, "tests/test_calc.py": TEST}
    assert mined.candidate.start_files == {}
    spec = BuildFamily().task_spec(mined.candidate, None, SOURCE)
    assert spec.solution_deleted == [] and set(spec.solution_files) == {"calc.py"}
    assert "log does not show in full were left out: .gitleaks.toml, README.md, docs/notes.md" in spec.instruction


@pytest.mark.parametrize("lost", ["calc.py", "tests/data/cases.json", "pyproject.toml", "requirements-dev.txt"])
def test_a_lost_file_the_project_needs_still_drops_the_candidate(tmp_path: Path, lost: str) -> None:
    session = (
        _session()
        .call("Write", {"file_path": lost, "content": "x = 1\n"})
        .call("Edit", {"file_path": lost, "old_string": "no such text", "new_string": "x"})
        .call("Edit", {"file_path": "README.md", "old_string": "a", "new_string": "b"})
    )
    [mined] = mine_build_candidates(_record(session, tmp_path), "sess")
    assert mined.drop is not None and mined.drop.reason == "reference_files_lost"
    assert mined.drop.detail.endswith(f": {lost}")
    assert mined.candidate.left_out_files == ["README.md"]


def test_a_non_python_project_with_lost_files_is_not_python(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .user("Build the web page and its test.")
        .call("Write", {"file_path": "src/page.ts", "content": "export const x = 1;\n"})
        .call("Write", {"file_path": "src/page.test.ts", "content": "test('x', () => {});\n"})
        .call("Edit", {"file_path": "src/page.test.ts", "old_string": "no such text", "new_string": "x"})
    )
    [mined] = mine_build_candidates(_record(session, tmp_path), "sess")
    assert mined.drop is not None and mined.drop.reason == "not_python"


def test_a_test_bent_after_failing_is_not_a_session_test(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .user("Build calc.py with add() and a test.")
        .call("Write", {"file_path": "calc.py", "content": CALC.replace("+", "-")})
        .call("Write", {"file_path": "tests/test_calc.py", "content": TEST})
        .bash("python -m pytest -q", "1 failed in 0.01s", exit_code=1)
        .call("Edit", {"file_path": "tests/test_calc.py", "old_string": "== 3", "new_string": "== -1"})
        .bash("python -m pytest -q", "1 passed in 0.01s")
    )
    [mined] = mine_build_candidates(_record(session, tmp_path), "sess")
    assert mined.drop is None and mined.candidate.session_tests == []
    # Without a model there are no hidden tests to grade with.
    with pytest.raises(CandidateRejected) as rejected:
        BuildFamily().task_spec(mined.candidate, None, SOURCE)
    assert rejected.value.drop.reason == "no_session_tests"


def test_a_session_without_python_is_not_python(tmp_path: Path) -> None:
    session = SessionBuilder().user("Write a README.").call("Write", {"file_path": "README.md", "content": "Hi\n"})
    [mined] = mine_build_candidates(_record(session, tmp_path), "sess")
    assert mined.drop is not None and mined.drop.reason == "not_python"
    assert mine_build_candidates(_record(SessionBuilder().user("What is 2+2?"), tmp_path / "qa"), "q") == []


def test_recorded_task_spec_has_contract_reference_and_session_tests(tmp_path: Path) -> None:
    [mined] = mine_build_candidates(_record(_session(), tmp_path), "sess")
    spec = BuildFamily().task_spec(mined.candidate, None, SOURCE)
    assert spec.solution_files == {"calc.py": CALC.encode()}
    assert set(spec.project_files) == {"CONTRACT.md"}
    assert "def add(a, b):" in spec.project_files["CONTRACT.md"].decode()
    assert spec.tests is not None
    assert spec.tests.reward == "fraction"
    assert spec.tests.tracked_test_ids == ["tests/test_calc.py::test_add"]
    assert spec.tests.test_files == {"tests/test_calc.py": TEST}
    assert "assert add" not in spec.instruction and "Build calc.py" in spec.instruction


EXPECTED_SAMPLES = {
    "python-pytest-fix": (None, ["tests/test_intervals.py"]),
    "python-pytest-all-pass": (None, ["tests/test_intervals.py"]),
    "python-pytest-config-cheat": (None, ["tests/test_intervals.py"]),
    "python-pytest-test-edit": (None, []),
    "python-unittest-fix": (None, ["tests/test_slugify.py"]),
    "node-npm-test-fix": ("not_python", []),
    "node-npm-test-config-cheat": ("not_python", []),
    "python-build-package": (None, ["tests/test_convert.py"]),
    "python-build-shallow-tests": (None, ["tests/test_stats.py"]),
}


@pytest.mark.parametrize("fmt", ["claude-code", "codex", "pi", "atif"])
def test_sample_sessions_in_every_format(fmt: str, tmp_path: Path) -> None:
    found = {}
    for path in sorted((EXAMPLES / fmt).iterdir()):
        if path.stem in EXPECTED_SAMPLES:
            [mined] = mine_build_candidates(record_for(path, tmp_path / path.name), path.stem)
            found[path.stem] = (mined.drop.reason if mined.drop else None, mined.candidate.session_tests)
    assert found == EXPECTED_SAMPLES


ARITH = '''"""Small arithmetic helpers."""


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def mean(values):
    if not values:
        raise ValueError("mean of nothing")
    return sum(values) / len(values)
'''
ARITH_TESTS = """import pytest

from arith import add, clamp, mean, mul, sub


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-2, -3) == -5


def test_sub():
    assert sub(7, 3) == 4


def test_mul():
    assert mul(4, 5) == 20


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0


def test_clamp_high():
    assert clamp(50, 0, 10) == 10


def test_clamp_inside():
    assert clamp(7, 0, 10) == 7


def test_mean():
    assert mean([1, 2, 3, 6]) == 3


def test_mean_empty():
    with pytest.raises(ValueError):
        mean([])
"""


@pytest.mark.docker
@pytest.mark.slow
def test_a_build_with_a_lost_readme_is_calibrated_and_published(tmp_path: Path, fake_provider: FakeProvider) -> None:
    session = (
        SessionBuilder()
        .user("Build arith.py with add, sub, mul, clamp and mean, with tests and a README.")
        .call("Write", {"file_path": "arith.py", "content": ARITH})
        .call("Write", {"file_path": "tests/test_arith.py", "content": ARITH_TESTS})
        .call("Write", {"file_path": "README.md", "content": "# arith\n"})
        .call("Edit", {"file_path": "README.md", "old_string": "not there", "new_string": "Usage"})
        .bash("python -m pytest -q", "9 passed in 0.02s")
    )
    log = tmp_path / "logs" / "arith-session.json"
    log.parent.mkdir()
    log.write_text(session.build().model_dump_json(exclude_none=True))
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        build = ToyPipeline(tmp_path / "run", [str(log)], fake_provider, instance, family="build")
        result, _ = build.run(llm=None)

    assert result.success
    [candidate] = build.candidates()
    assert candidate["kept"], candidate
    assert candidate["facts"]["left_out_files"] == ["README.md"]
    assert candidate["calibration_facts"]["tests_kept"] >= 6
    task = Path(candidate["published_path"])
    assert "left out: README.md" in (task / "instruction.md").read_text()
    assert not (task / "environment" / "workspace" / "README.md").exists()
    assert "README" not in (task / "solution" / "solve.sh").read_text()
    assert fake_provider.request_count == 0

"""Replay on a repository's commit: files the log never read are rebuilt from git, what the
log shows wins, the commit is the one before the session, a repository that does not match
the session is refused with a reason, and an unchanged repository and session rerun nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.config import RunConfigFile
from traj2env_assets.layout import Workspace
from traj2env_assets.replay import ReplayRecord
from traj2env_assets.repositories import Coverage, RepositoryEntry, find_coverage
from traj2env_assets.stages.convert.conversion import trajectory_json
from traj2env_assets.stages.replay.partition import replay_partition
from traj2env_assets.stages.scan.gate import ScanVerdict
from traj2env_assets_tests.replay.builders import SessionBuilder
from traj2env_assets_tests.repositories.gitrepo import commit, git

KEY = "repo-session"
BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
BEFORE = "2026-02-01T09:00:00+00:00"  # the session starts 2026-03-01T10:00:00Z (SessionBuilder)


def _session(cwd: Path, read_calc: str | None = None, read_test: bool = True) -> SessionBuilder:
    """Fix calc.py by an edit without reading it (unless ``read_calc`` is what a read showed)."""
    session = SessionBuilder(cwd=str(cwd)).user("make the test pass")
    if read_test:
        session.call("Read", {"file_path": f"{cwd}/test_calc.py"}, "", file_content=TEST.rstrip("\n") + "\n")
    if read_calc is not None:
        session.call("Read", {"file_path": f"{cwd}/calc.py"}, "", file_content=read_calc)
    old, new = ("a - b", "a + b") if read_calc is None else ("a * b", "a + b")
    return (
        session.bash("python -m pytest -q", "FAILED test_calc.py::test_add\n1 failed", exit_code=1)
        .call("Edit", {"file_path": f"{cwd}/calc.py", "old_string": old, "new_string": new})
        .bash("python -m pytest -q", "1 passed")
    )


def _workspace(root: Path, session: SessionBuilder) -> Workspace:
    workspace = Workspace(root=root)
    conversion = workspace.trajectory_file(KEY)
    conversion.parent.mkdir(parents=True, exist_ok=True)
    conversion.write_text(trajectory_json(session.build()))  # as the conversion stage writes it
    atomic_write_json(workspace.verdict_file(KEY), ScanVerdict(outcome="clean"))
    return workspace


def _files_before_fix(workspace: Workspace) -> dict[str, str]:
    return ReplayRecord.load(workspace.replay_dir(KEY)).files_before(1)


def test_edits_to_files_never_read_are_lost_without_the_repository_and_rebuilt_with_it(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    used = commit(repo, {"calc.py": BUGGY, "test_calc.py": TEST}, BEFORE)
    workspace = _workspace(tmp_path / "ws", _session(repo))

    alone = replay_partition(workspace, KEY)
    assert alone.repository is None and "calc.py" in ReplayRecord.load(alone.path).lost_files
    assert not (alone.path / "repository.json").exists()

    result = replay_partition(workspace, KEY, repositories=[RepositoryEntry(path=repo)])
    assert not result.cached and result.repository is not None
    assert (result.repository.status, result.repository.commit) == ("used", used)
    assert (result.repository.files_from_repository, result.repository.files_differing) == (2, 0)
    assert result.repository.reads_agreeing == 1
    assert _files_before_fix(workspace) == {"calc.py": FIXED, "test_calc.py": TEST}
    assert not any(".git" in path.split("/") for path in ReplayRecord.load(result.path).files)


def test_uncommitted_work_the_log_shows_wins_over_the_commit_and_is_counted(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    commit(repo, {"calc.py": BUGGY, "test_calc.py": TEST}, BEFORE)
    uncommitted = "def add(a, b):\n    return a * b\n"
    workspace = _workspace(tmp_path / "ws", _session(repo, read_calc=uncommitted))
    result = replay_partition(workspace, KEY, repositories=[RepositoryEntry(path=repo)])
    assert result.repository is not None and result.repository.status == "used"
    assert (result.repository.reads_agreeing, result.repository.files_differing) == (1, 1)
    assert _files_before_fix(workspace)["calc.py"] == FIXED


def test_a_commit_made_during_the_session_is_not_used_the_one_before_it_is(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    before = commit(repo, {"calc.py": BUGGY, "test_calc.py": TEST}, BEFORE)
    commit(repo, {"calc.py": FIXED}, "2026-03-01T10:30:00+00:00", "the session's fix")
    workspace = _workspace(tmp_path / "ws", _session(repo))
    result = replay_partition(workspace, KEY, repositories=[RepositoryEntry(path=repo)])
    assert result.repository is not None and result.repository.commit == before
    record = ReplayRecord.load(result.path)
    assert record.files_before(0)["calc.py"] == BUGGY


def test_cwds_map_a_recorded_directory_of_another_machine_onto_the_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    commit(repo, {"calc.py": BUGGY, "test_calc.py": TEST}, BEFORE)
    workspace = _workspace(tmp_path / "ws", _session(Path("/Users/alice/proj")))
    entry = RepositoryEntry(path=repo, cwds=["/Users/alice/proj"])
    result = replay_partition(workspace, KEY, repositories=[entry])
    assert result.repository is not None and result.repository.status == "used"
    assert _files_before_fix(workspace)["calc.py"] == FIXED
    other = RepositoryEntry(path=repo, cwds=["/Users/bob/proj"])
    assert replay_partition(workspace, KEY, repositories=[other]).repository is None


def test_auto_finds_the_checkout_at_the_cwd_or_the_one_holding_the_session_file(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    commit(repo, {"calc.py": BUGGY, "test_calc.py": TEST, "pkg/mod.py": "x = 1\n"}, BEFORE)
    workspace = _workspace(tmp_path / "ws", _session(repo))
    result = replay_partition(workspace, KEY, repositories="auto")
    assert result.repository is not None and result.repository.status == "used"
    assert find_coverage("auto", str(repo / "pkg"), None) == Coverage(repo.resolve(), "pkg")
    (repo / ".github").mkdir()
    assert find_coverage("auto", str(repo / ".github"), None) == Coverage(repo.resolve(), ".github")
    entry = RepositoryEntry(path=repo, cwds=["/Users/alice/proj"])
    assert find_coverage([entry], "/Users/alice/proj/.config", None) == Coverage(repo.resolve(), ".config")
    session_file = repo / ".codex" / "sessions" / "rollout.jsonl"
    session_file.parent.mkdir(parents=True)
    session_file.write_text("{}\n")
    assert find_coverage("auto", "/Users/alice/proj", session_file) == Coverage(repo.resolve(), "")
    assert find_coverage("auto", "/Users/alice/proj", tmp_path / "elsewhere.jsonl") is None


@pytest.mark.parametrize(("read_test", "reason"), [(True, "repository_disagrees"), (False, "repository_unconfirmed")])
def test_a_repository_the_log_does_not_confirm_is_refused_and_never_used(
    tmp_path: Path, read_test: bool, reason: str
) -> None:
    repo = tmp_path / "other"
    commit(repo, {"calc.py": BUGGY, "test_calc.py": "def test_other():\n    assert True\n"}, BEFORE)
    workspace = _workspace(tmp_path / "ws", _session(repo, read_test=read_test))
    result = replay_partition(workspace, KEY, repositories=[RepositoryEntry(path=repo)])
    assert result.repository is not None
    assert (result.repository.status, result.repository.reason) == ("refused", reason)
    assert "calc.py" in ReplayRecord.load(result.path).lost_files, "replayed without the repository"
    assert (result.path / "repository.json").is_file()


def test_history_whose_dates_are_out_of_order_around_the_start_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    commit(repo, {"calc.py": BUGGY, "test_calc.py": TEST}, BEFORE)
    commit(repo, {"calc.py": FIXED}, "2026-03-02T10:00:00+00:00")
    commit(repo, {"README.md": "x\n"}, "2026-02-15T10:00:00+00:00")
    workspace = _workspace(tmp_path / "ws", _session(repo))
    result = replay_partition(workspace, KEY, repositories=[RepositoryEntry(path=repo)])
    assert result.repository is not None and result.repository.reason == "repository_history_out_of_order"


def test_an_unchanged_repository_and_session_rerun_nothing_and_a_changed_commit_reruns(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    commit(repo, {"calc.py": BUGGY, "test_calc.py": TEST}, BEFORE)
    workspace = _workspace(tmp_path / "ws", _session(repo))
    repositories = [RepositoryEntry(path=repo)]
    first = replay_partition(workspace, KEY, repositories=repositories)
    commit(repo, {"NOTES.md": "after the session\n"}, "2026-04-01T10:00:00+00:00")
    again = replay_partition(workspace, KEY, repositories=repositories)
    assert again.cached and again.data_version == first.data_version and again.repository == first.repository
    git(
        repo,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-q",
        "--amend",
        "-m",
        "x",
        date="2026-04-01T10:00:00+00:00",
    )
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    commit(repo, {"calc.py": BUGGY + "# changed\n"}, "2026-02-02T09:00:00+00:00")
    changed = replay_partition(workspace, KEY, repositories=repositories)
    assert not changed.cached and changed.data_version != first.data_version


def test_the_option_is_validated_and_its_paths_resolve_against_the_current_directory(tmp_path: Path) -> None:
    config = RunConfigFile.model_validate({"source": {"repositories": [{"path": "proj", "cwds": ["/Users/a/proj/"]}]}})
    entry = config.source.repositories[0] if isinstance(config.source.repositories, list) else None
    assert entry is not None and entry.cwds == ["/Users/a/proj"]
    assert RunConfigFile.model_validate({"source": {"repositories": "auto"}}).source.repositories == "auto"
    for bad in ({"path": "https://github.com/o/r"}, {"path": "p", "cwds": ["relative/dir"]}, {"paths": "p"}):
        with pytest.raises(ValueError):
            RunConfigFile.model_validate({"source": {"repositories": [bad]}})
    from traj2env_assets.config import RunSettings

    settings = RunSettings.resolve(config, tmp_path / "ws", cwd=tmp_path)
    assert isinstance(settings.source.repositories, list)
    assert settings.source.repositories[0].path == tmp_path.resolve() / "proj"

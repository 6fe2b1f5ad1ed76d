"""Path escapes are refused and recorded; snapshot storage grows with the bytes changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets.replay.paths import ProjectPaths, Refused, Resolved
from traj2env_assets_tests.replay.builders import ROOT, SessionBuilder


@pytest.mark.parametrize(
    ("raw", "cwd", "expected"),
    [
        ("src/a.py", ROOT, Resolved("src/a.py")),
        ("../b.py", f"{ROOT}/src", Resolved("b.py")),
        (f"{ROOT}/x/../y.py", ROOT, Resolved("y.py")),
        ("../../etc/passwd", ROOT, Refused("../../etc/passwd", "outside_project")),
        ("/etc/passwd", ROOT, Refused("/etc/passwd", "outside_project")),
        ("~/.bashrc", ROOT, Refused("~/.bashrc", "home_relative")),
        (f"{ROOT}/.git/hooks/pre-commit", ROOT, Refused(f"{ROOT}/.git/hooks/pre-commit", "git_metadata")),
        (".", ROOT, Refused(".", "project_root")),
        (f"{ROOT}-evil/a", ROOT, Refused(f"{ROOT}-evil/a", "outside_project")),
    ],
)
def test_resolution(raw: str, cwd: str, expected: Resolved | Refused) -> None:
    assert ProjectPaths(ROOT).resolve(raw, cwd) == expected


def test_a_cwd_that_is_not_a_string_counts_as_none() -> None:
    # A mangled log's cwd may be any JSON; resolution (cached) must neither fail nor use it.
    paths = ProjectPaths(ROOT)
    for cwd in (["x"], {"a": 1}, 7, True):
        assert paths.resolve("src/a.py", cwd) == paths.resolve("src/a.py", None) == Resolved("src/a.py")  # type: ignore[arg-type]


def test_windows_paths_map_onto_the_project() -> None:
    paths = ProjectPaths("C:\\Users\\dev\\proj")
    assert paths.resolve("C:\\Users\\dev\\proj\\src\\a.py", None) == Resolved("src/a.py")
    assert paths.resolve("D:\\other\\a.py", None) == Refused("D:\\other\\a.py", "outside_project")


def test_escape_attempts_write_nothing_outside_the_workspace(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "pwned.txt"
    session = (
        SessionBuilder()
        .call("Write", {"file_path": str(target), "content": "x"})
        .call("Write", {"file_path": "../../../" + str(target), "content": "x"})
        .call("Edit", {"file_path": "/etc/hosts", "old_string": "a", "new_string": "b"})
        .bash(f"cat > {target} <<'EOF'\nx\nEOF")
        .bash("cd .. && echo x > escaped.txt")
        .bash("echo x > ~/home.txt; ln -s /etc/passwd link && echo y > link")
        .call("apply_patch", {"input": f"*** Begin Patch\n*** Add File: {target}\n+x\n*** End Patch"}, "Success.")
        .call("Write", {"file_path": f"{ROOT}/.git/hooks/pre-commit", "content": "evil"})
        .bash("true")
    )
    workspace = tmp_path / "workspace"
    result = replay_trajectory(session.build())
    write_record(result, workspace / "replay" / "k")
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "workspace"]
    record = ReplayRecord.load(workspace / "replay" / "k")
    reasons = record.fidelity.unsafe_paths_by_reason
    assert reasons == {"outside_project": 6, "home_relative": 1, "git_metadata": 1, "symlink": 1}
    assert {r.raw_path for r in record.record.refused_paths} >= {str(target), "/etc/hosts", "escaped.txt"}
    assert record.lost_files == {"link": "symlink"}
    assert record.files_before(3) == {}


def test_relative_path_with_unknown_cwd_is_refused(tmp_path: Path) -> None:
    record_dir = tmp_path / "r"
    write_record(replay_trajectory(SessionBuilder().bash("cd $DIR && echo x > a.txt").build()), record_dir)
    record = ReplayRecord.load(record_dir)
    assert record.fidelity.unsafe_paths_by_reason == {"unknown_cwd": 1}
    assert record.files == {}


def test_storage_grows_with_bytes_changed_not_commands(tmp_path: Path) -> None:
    big = "".join(f"line {i} of a large module\n" for i in range(20_000))  # ~540 KB
    session = SessionBuilder().call("Write", {"file_path": "big.py", "content": big})
    for i in range(200):
        session.call(
            "Edit", {"file_path": "big.py", "old_string": f"line {i * 50} of", "new_string": f"LINE {i * 50} of"}
        )
        session.bash("pytest -q")
    result = replay_trajectory(session.build())
    write_record(result, tmp_path / "r")
    on_disk = sum(p.stat().st_size for p in (tmp_path / "r").rglob("*") if p.is_file())
    # 200 commands x 540 KB would be 108 MB; a whole copy every 32 splices is the cap.
    assert result.record.fidelity.stored_bytes < 10 * len(big)
    assert on_disk < 12 * len(big)
    record = ReplayRecord.load(tmp_path / "r")
    assert record.files_before(199)["big.py"].count("LINE ") == 200
    assert record.files_before(0)["big.py"].count("LINE ") == 1

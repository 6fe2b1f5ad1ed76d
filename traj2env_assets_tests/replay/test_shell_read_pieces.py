"""Codex shell reads whose output is a slice of a file, and files rebuilt from them."""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets.replay.read_pieces import ReadChunk
from traj2env_assets.replay.shell_effects import shell_read
from traj2env_assets_tests.replay.builders import ROOT, SessionBuilder

FILE = "".join(f"line {n}\n" for n in range(1, 8))  # seven lines and a final newline


def test_slices_name_their_lines_and_where_the_file_ends() -> None:
    assert shell_read("cat f.py", FILE) == ("f.py", ReadChunk(1, [*FILE.split("\n")], 8))
    # Asked for lines 1-3 and got all three: where the file ends is not known.
    assert shell_read("sed -n '1,3p' f.py", "line 1\nline 2\nline 3\n") == (
        "f.py",
        ReadChunk(1, ["line 1", "line 2", "line 3"], None),
    )
    # Asked for 5-20 and got three lines: the end of the file (a final newline counts as a line).
    assert shell_read("sed -n '5,20p' f.py", "line 5\nline 6\nline 7\n") == (
        "f.py",
        ReadChunk(5, ["line 5", "line 6", "line 7", ""], 8),
    )
    assert shell_read("head -n 2 f.py", "line 1\nline 2\n") == ("f.py", ReadChunk(1, ["line 1", "line 2"], None))
    assert shell_read("head -2 f.py", "line 1\nline 2\n") == ("f.py", ReadChunk(1, ["line 1", "line 2"], None))
    assert shell_read("tail -n +6 f.py", "line 6\nline 7\n") == ("f.py", ReadChunk(6, ["line 6", "line 7", ""], 8))
    # Numbered listings: nl/cat -n end every line with a newline, so the end stays unknown.
    assert shell_read("nl -ba f.py | sed -n '2,3p'", "     2\tline 2\n     3\tline 3\n") == (
        "f.py",
        ReadChunk(2, ["line 2", "line 3"], None),
    )
    assert shell_read("nl -ba -w1 -s': ' f.py", "1: line 1\n2: line 2\n") == (
        "f.py",
        ReadChunk(1, ["line 1", "line 2"], None),
    )
    assert shell_read("cat -n f.py", "     1\tline 1\n") == ("f.py", ReadChunk(1, ["line 1"], None))


def test_what_is_not_a_known_slice_is_no_read() -> None:
    assert shell_read("sed -n '1,3p' f.py", "line 1\nline 2\nline 3\nline 4\n") is None  # more than asked
    assert shell_read("sed -n '1,200p' a.py && sed -n '1,200p' b.py", "a\nb\n") is None  # two files, one output
    assert shell_read("nl -ba f.py | sed -n '2,3p'", "     5\tline 5\n") is None  # numbers disagree
    assert shell_read("nl f.py", "     1\tline 1\n") is None  # plain nl skips blank lines
    assert shell_read("tail -n 3 f.py", "line 5\nline 6\nline 7\n") is None  # from the end: start unknown
    assert shell_read("sed -n '1,3p' $F", "x\n") is None
    assert shell_read("cat f.py", "line 1\n[... 40 more lines]") is None


def test_login_shell_noise_before_the_output_is_not_file_content() -> None:
    noise = "/opt/homebrew/Library/Homebrew/cmd/shellenv.sh: line 18: /bin/ps: Operation not permitted\n"
    assert shell_read("sed -n '1,20p' f.py", noise + FILE) == ("f.py", ReadChunk(1, [*FILE.split("\n")], 8))


def _exec(builder: SessionBuilder, command: str, output: str) -> SessionBuilder:
    return builder.call(
        "exec_command", {"cmd": command, "workdir": ROOT}, f"Process exited with code 0\nOutput:\n{output}"
    )


def _record(builder: SessionBuilder, tmp_path: Path) -> ReplayRecord:
    write_record(replay_trajectory(builder.build()), tmp_path)
    return ReplayRecord.load(tmp_path)


def test_sed_pieces_that_reach_the_end_rebuild_the_file_and_a_patch_applies(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: f.py\n@@\n-line 6\n+line six\n*** End Patch"
    session = SessionBuilder(source_format="codex")
    session = _exec(session, "sed -n '1,4p' f.py", "line 1\nline 2\nline 3\nline 4\n")
    session = _exec(session, "nl -ba f.py | sed -n '4,5p'", "     4\tline 4\n     5\tline 5\n")
    session = _exec(session, "sed -n '6,100p' f.py", "line 6\nline 7\n")
    session = session.call("apply_patch", {"input": patch}, "Success. Updated the following files:\nM f.py")
    session = _exec(session, "ls", "f.py")
    record = _record(session, tmp_path)
    assert record.files_before(2) == {}
    assert record.files_before(3) == {"f.py": FILE.replace("line 6", "line six")}
    assert [h.action for h in record.files["f.py"].history] == ["read", "patch"]
    assert record.fidelity.edits_failed == 0


def test_pieces_across_a_script_run_are_not_joined(tmp_path: Path) -> None:
    # The script may have rewritten f.py: lines read before it belong to another version.
    session = SessionBuilder(source_format="codex")
    session = _exec(session, "sed -n '1,4p' f.py", "line 1\nline 2\nline 3\nline 4\n")
    session = _exec(session, "python rewrite.py", "")
    session = _exec(session, "sed -n '5,100p' f.py", "line 5\nline 6\nline 7\n")
    session = _exec(session, "ls", "f.py")
    assert _record(session, tmp_path).files_before(3) == {}


def test_pieces_that_disagree_start_over(tmp_path: Path) -> None:
    session = SessionBuilder(source_format="codex")
    session = _exec(session, "sed -n '1,4p' f.py", "line 1\nline 2\nline 3\nline 4\n")
    session = _exec(session, "sed -n '4,100p' f.py", "LINE FOUR\nline 5\n")
    session = _exec(session, "ls", "f.py")
    assert _record(session, tmp_path).files_before(2) == {}

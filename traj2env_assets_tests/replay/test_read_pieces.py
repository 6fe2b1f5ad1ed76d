"""Read pieces: pi trailers, and files rebuilt from pieces read at offsets (pi and Claude Code)."""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets.replay.read_pieces import ReadChunk, parse_pi_read
from traj2env_assets_tests.replay.builders import SessionBuilder

FILE = "one\ntwo\nthree\nfour\n"  # five lines for pi: the final newline ends with an empty one


def test_trailers_give_the_lines_shown_and_the_file_length() -> None:
    assert parse_pi_read("one\ntwo\n\n[3 more lines in file. Use offset=3 to continue]", None) == ReadChunk(
        1, ["one", "two"], 5
    )
    assert parse_pi_read("three\n\n... (2 more lines not shown. Use offset=4 to continue reading)", 3) == ReadChunk(
        3, ["three"], 5
    )
    showing = "one\ntwo\n\n[Showing lines 1-2 of 5 (50.0KB limit). Use offset=3 to continue]"
    assert parse_pi_read(showing, None) == ReadChunk(1, ["one", "two"], 5)
    assert parse_pi_read("four\n", 4) == ReadChunk(4, ["four", ""], 5)
    assert parse_pi_read("x\n\n[Line 1 is 80KB, exceeds 50KB limit. Use bash]", None) is None
    assert parse_pi_read("one\ntwo\n\n[3 more lines in file. Use offset=9 to continue]", None) is None


def _record(builder: SessionBuilder, tmp_path: Path) -> ReplayRecord:
    write_record(replay_trajectory(builder.build()), tmp_path)
    return ReplayRecord.load(tmp_path)


def test_pieces_covering_the_file_rebuild_it(tmp_path: Path) -> None:
    session = (
        SessionBuilder(source_format="pi")
        .call("read", {"path": "f.txt", "limit": 2}, "one\ntwo\n\n[3 more lines in file. Use offset=3 to continue]")
        .bash("true")
        .call("read", {"path": "f.txt", "offset": 3}, "three\nfour\n")
        .bash("true")
    )
    record = _record(session, tmp_path)
    assert record.lost_before(0) == {"f.txt"}
    assert record.files_before(1) == {"f.txt": FILE}
    assert record.fidelity.full_reads == 1


def test_a_change_between_pieces_starts_over(tmp_path: Path) -> None:
    session = (
        SessionBuilder(source_format="pi")
        .call("read", {"path": "f.txt", "limit": 2}, "one\ntwo\n\n[3 more lines in file. Use offset=3 to continue]")
        .bash("sed -i 's/one/ONE/' f.txt")
        .call("read", {"path": "f.txt", "offset": 3}, "three\nfour\n")
        .bash("true")
    )
    assert _record(session, tmp_path).files_before(1) == {}


def test_a_whole_read_with_a_limit_past_the_end_is_the_file(tmp_path: Path) -> None:
    session = SessionBuilder(source_format="pi").call("read", {"path": "f.txt", "limit": 50}, FILE).bash("true")
    assert _record(session, tmp_path).files_before(0) == {"f.txt": FILE}


def test_claude_code_pieces_from_the_file_fields(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Read", {"file_path": "c.py", "limit": 2}, "listing", file_content="a = 1\nb = 2")
        .bash("true")
        .call("Read", {"file_path": "c.py", "offset": 3}, "listing", file_content="c = 3\n")
        .bash("true")
    )
    trajectory = session.build()
    first, second = trajectory.steps[0].observation, trajectory.steps[2].observation
    assert first is not None and first.results[0].extra is not None
    assert second is not None and second.results[0].extra is not None
    first.results[0].extra.update(file_start_line=1, file_num_lines=2, file_total_lines=4)
    second.results[0].extra.update(file_start_line=3, file_num_lines=2, file_total_lines=4)
    write_record(replay_trajectory(trajectory), tmp_path)
    record = ReplayRecord.load(tmp_path)
    assert record.lost_before(0) == {"c.py"}
    assert record.files_before(1) == {"c.py": "a = 1\nb = 2\nc = 3\n"}

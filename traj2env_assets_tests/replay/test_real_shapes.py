"""Replay of the real shapes (``formats/real_shapes.py``: logs of our own making that copy the
quirks of real public sessions; the real ones are checked by ``corpus/test_real_corpus.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traj2env_assets.checks import parse_check_result, recognise_check
from traj2env_assets.families.repair.candidates import mine_repair_candidates
from traj2env_assets.replay import ReplayRecord
from traj2env_assets.replay.text_edits import decode_numbered_read
from traj2env_assets_tests.formats import real_shapes
from traj2env_assets_tests.formats.real_shapes import WRITERS
from traj2env_assets_tests.loaded_logs import load_trajectory, replay_record


@pytest.fixture
def pi_record(tmp_path: Path) -> ReplayRecord:
    return replay_record(
        load_trajectory(real_shapes.pi_legacy_compaction(tmp_path / "pi.jsonl")),
        tmp_path / "record",
    )


def test_pi_check_fails_then_passes_with_the_edit_between(
    pi_record: ReplayRecord,
) -> None:
    failing, passing = [c for c in pi_record.shell_commands() if c.command == real_shapes.PI_CHECK]
    assert (failing.exit_code, passing.exit_code) == (2, 0)
    assert pi_record.files_before(failing.command_index)["src/mode.ts"] == real_shapes.PI_SOURCE
    assert pi_record.files_before(passing.command_index)["src/mode.ts"] == real_shapes.PI_FIXED
    results = []
    for command in (failing, passing):
        check = recognise_check(
            command.command,
            pi_record.files_before(command.command_index),
            cwd=command.cwd or "",
        )
        assert check is not None and check.tool == "npm" and check.script == "check"
        results.append(parse_check_result(check, command.output, command.exit_code))
    assert [result.passed for result in results] == [False, True]
    # Diagnostics are identified by file, code and message, never by line (edits move lines).
    assert results[0].failing_ids == ["src/mode.ts: TS2305 Module '\"./types\"' has no exported member 'QueueMode'."]
    assert results[1].failing_ids == []


def test_pi_sed_in_place_and_outside_paths_are_counted(pi_record: ReplayRecord) -> None:
    assert pi_record.lost_files == {"src/notes.ts": "in_place_edit"}
    assert pi_record.fidelity.commands == 3
    assert pi_record.fidelity.edits_applied == 1
    assert pi_record.fidelity.unsafe_paths_by_reason == {"outside_project": 1}


def test_pi_check_is_mined_and_dropped_for_the_file_sed_changed(
    pi_record: ReplayRecord,
) -> None:
    # As the real session's third check: a file changed by `sed -i` between fail and pass is not known in full.
    [mined] = mine_repair_candidates(pi_record, "pi-shape")
    assert mined.candidate.check.script == "check"
    assert mined.candidate.fixed_files == {"src/mode.ts": real_shapes.PI_FIXED}
    assert mined.drop is not None and mined.drop.reason == "fix_files_lost"
    assert "src/notes.ts" in mined.drop.detail


def test_claude_edit_variants_with_original_file(tmp_path: Path) -> None:
    trajectory = load_trajectory(real_shapes.claude_edit_variants(tmp_path / "s.jsonl"))
    outside = replay_record(trajectory, tmp_path / "default")
    # The edited files live in a pytest temp dir, outside the session cwd: refused.
    assert outside.fidelity.unsafe_paths_by_reason == {"outside_project": 4}
    assert outside.files == {}
    record = replay_record(trajectory, tmp_path / "rooted", project_root=real_shapes.CLAUDE_EDIT_ROOT)
    final = record.final_files()
    assert "It contains the word goodbye in the middle." in final["edit_basic.txt"]
    assert "It contains the word hello in the middle." not in final["edit_basic.txt"]
    assert final["edit_replace_all.txt"].startswith("This file has baz repeated.\nThe first foo")
    assert (
        "const NEW_CODE = true;" in final["edit_multiline.txt"] and "OLD_CODE = true" not in final["edit_multiline.txt"]
    )
    assert record.fidelity.edits_failed == 0
    assert all(state.history[0].action == "pre_image" for state in record.files.values())


def test_claude_read_variants_full_read_only(tmp_path: Path) -> None:
    record = replay_record(load_trajectory(real_shapes.claude_read_variants(tmp_path / "s.jsonl")), tmp_path / "r")
    assert list(record.files) == ["conftest.py"]
    assert record.final_files()["conftest.py"] == real_shapes.CONFTEST
    assert record.fidelity.full_reads == 1


def test_redacted_codex_patches_fail_as_redacted_not_as_parse_errors(tmp_path: Path) -> None:
    record = replay_record(load_trajectory(real_shapes.codex_redacted(tmp_path / "s.jsonl")), tmp_path / "r")
    assert record.fidelity.edits_failed_by_reason == {"content_redacted": 2}


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_every_shape_replays_with_consistent_fidelity_figures(tmp_path: Path, name: str) -> None:
    record = replay_record(load_trajectory(WRITERS[name](tmp_path / name)), tmp_path / "r")
    fidelity = record.fidelity
    assert fidelity.events == len(record.timeline)
    assert fidelity.files_rebuilt + fidelity.files_lost + fidelity.files_deleted == len(record.files)
    for command in record.shell_commands():
        assert set(record.files_before(command.command_index)).isdisjoint(record.lost_before(command.command_index))


def test_claude_numbered_listings_decode_to_the_recorded_file_content(
    tmp_path: Path,
) -> None:
    path = real_shapes.claude_repeated_history(tmp_path / "s.jsonl")
    checked = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("//"):
            continue
        entry = json.loads(line)
        structured = entry.get("toolUseResult")
        if not (isinstance(structured, dict) and structured.get("type") == "text"):
            continue
        listing = entry["message"]["content"][0]["content"]
        assert decode_numbered_read(listing) == structured["file"]["content"]
        checked += 1
    assert checked == len(real_shapes.PLUGIN_FILES)

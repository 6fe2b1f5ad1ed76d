"""Replay of the real agent logs in fixtures/real/, with rebuilt contents checked at chosen points."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from atif import Trajectory

from traj2env_assets.checks import parse_check_result, recognise_check
from traj2env_assets.formats.convert import convert_source
from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets.replay.text_edits import decode_numbered_read

REAL = Path(__file__).parents[1] / "fixtures" / "real"


def _load(relative: str) -> Trajectory:
    converted = convert_source(REAL / relative)
    assert converted.trajectory is not None, converted.record.detail
    return converted.trajectory


def _record(trajectory: Trajectory, tmp_path: Path, project_root: str | None = None) -> ReplayRecord:
    write_record(replay_trajectory(trajectory, project_root=project_root), tmp_path / "record")
    return ReplayRecord.load(tmp_path / "record")


@pytest.fixture(scope="module")
def pi_record(tmp_path_factory: pytest.TempPathFactory) -> ReplayRecord:
    return _record(_load("pi-mono/before-compaction.jsonl"), tmp_path_factory.mktemp("pi"))


def test_pi_npm_run_check_fail_then_pass_with_edits_between(pi_record: ReplayRecord) -> None:
    commands = {c.command_index: c for c in pi_record.shell_commands()}
    failing, passing = commands[12], commands[14]
    assert failing.command == passing.command == "cd /Users/badlogic/workspaces/pi-mono && npm run check"
    assert (failing.exit_code, passing.exit_code) == (2, 0)
    session = "packages/coding-agent/src/core/agent-session.ts"
    before_fail = pi_record.files_before(12)[session]
    before_pass = pi_record.files_before(14)[session]
    assert "get queueMode(): QueueMode {" in before_fail
    # As the agent wrote it; the failing `npm run check` then ran `biome check --write`,
    # which re-sorted the imports (seen by the full read before the fix: a resync).
    assert "import type { Agent, AgentEvent, AgentState, AppMessage, ThinkingLevel, QueueMode }" in before_fail
    assert failing.effects == "opaque"
    assert 'get queueMode(): "all" | "one-at-a-time" {' in before_pass
    assert 'import type { Agent, AgentState, AppMessage, ThinkingLevel } from "@mariozechner/pi-agent-core";' in before_pass
    assert before_pass.startswith("/**\n * AgentSession - Core abstraction")


def test_pi_check_commands_are_recognised_and_judged(pi_record: ReplayRecord) -> None:
    commands = {c.command_index: c for c in pi_record.shell_commands()}
    results = []
    for index in (12, 14):
        command = commands[index]
        check = recognise_check(command.command, pi_record.files_before(index), cwd=command.cwd or "")
        assert check is not None and check.tool == "npm" and check.script == "check"
        results.append(parse_check_result(check, command.output, command.exit_code))
    assert [result.passed for result in results] == [False, True]
    # Diagnostics are identified by file, rule and message, never by line (edits move lines).
    assert "packages/coding-agent/src/core/agent-session.ts: lint/correctness/noUnusedImports" in results[0].failing_ids
    assert (
        "src/core/agent-session.ts: TS2305 Module '\"@mariozechner/pi-agent-core\"' has no exported member 'QueueMode'."
        in results[0].failing_ids
    )
    assert results[1].failing_ids == []


def test_pi_sed_in_place_and_git_restore_mark_files_lost(pi_record: ReplayRecord) -> None:
    reasons = set(pi_record.lost_files.values())
    assert {"in_place_edit", "partial_read"} <= reasons
    assert pi_record.fidelity.commands == 206
    assert pi_record.fidelity.edits_applied > 50
    assert pi_record.fidelity.unsafe_paths_by_reason == {"outside_project": 1}


def test_claude_edit_variants_with_original_file(tmp_path: Path) -> None:
    trajectory = _load("session-share/edit-tool-variants.jsonl")
    outside = _record(trajectory, tmp_path / "default")
    # The edited files live in a pytest temp dir, outside the session cwd: refused.
    assert outside.fidelity.unsafe_paths_by_reason == {"outside_project": 4}
    assert outside.files == {}
    root = "/private/var/folders/jv/1nszcffd0x74lysjsn_btj6w0000gn/T/pytest-of-pete/pytest-1/test_edit_tool_variants_chromi0"
    record = _record(trajectory, tmp_path / "rooted", project_root=root)
    final = record.final_files()
    assert "It contains the word goodbye in the middle." in final["edit_basic.txt"]
    assert "It contains the word hello in the middle." not in final["edit_basic.txt"]
    assert "baz" in final["edit_replace_all.txt"] and "bar" not in final["edit_replace_all.txt"]
    assert "NEW_CODE = true;" in final["edit_multiline.txt"]
    assert record.fidelity.edits_failed == 0
    assert all(s.history[0].action == "pre_image" for s in record.files.values())


def test_claude_read_variants_full_read_only(tmp_path: Path) -> None:
    record = _record(_load("session-share/read-tool-variants.jsonl"), tmp_path)
    assert list(record.files) == ["conftest.py"]
    assert record.final_files()["conftest.py"].startswith('"""Pytest configuration and fixtures for e2e tests."""\n')
    assert record.fidelity.full_reads == 1


@pytest.mark.parametrize(
    "relative",
    [
        "pi-mono/large-session.jsonl",
        "session-share/general-tool-calls.jsonl",
        "session-share/images-in-user-messages.jsonl",
        "localpush-codex/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl",
        "localpush-codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
        "derived-atif/edit-tool-variants.atif.json",
        "derived-atif/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.atif.json",
    ],
)
def test_every_real_fixture_replays_with_fidelity_figures(relative: str, tmp_path: Path) -> None:
    record = _record(_load(relative), tmp_path)
    fidelity = record.fidelity
    assert fidelity.events == len(record.timeline)
    assert fidelity.files_rebuilt + fidelity.files_lost + fidelity.files_deleted == len(record.files)
    for command in record.shell_commands():
        assert set(record.files_before(command.command_index)).isdisjoint(record.lost_before(command.command_index))


def test_redacted_codex_patches_fail_to_parse_not_crash(tmp_path: Path) -> None:
    record = _record(_load("localpush-codex/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl"), tmp_path)
    assert record.fidelity.edits_failed_by_reason == {"patch_parse_error": 22}


def test_pi_file_cut_at_50kb_is_rebuilt_from_the_follow_up_read(pi_record: ReplayRecord) -> None:
    renderer = pi_record.files["packages/coding-agent/src/tui/tui-renderer.ts"]
    # Step 2 read lines 1-1603 of 2377 (pi's 50 KB cap), step 3 read from line 1604 on.
    assert [(h.step_id, h.action) for h in renderer.history[:2]] == [(2, "lost"), (3, "read")]
    first_command = next(pi_record.shell_commands()).command_index
    text = pi_record.files_before(first_command)["packages/coding-agent/src/tui/tui-renderer.ts"]
    assert text.count("\n") == 2376
    assert text.startswith("import { randomBytes } from \"node:crypto\";\n")


def test_claude_numbered_listings_decode_to_the_recorded_file_content() -> None:
    checked = 0
    for line in (REAL / "session-share" / "general-tool-calls.jsonl").read_text().splitlines():
        if line.startswith("//"):
            continue
        entry = json.loads(line)
        structured = entry.get("toolUseResult")
        if not (isinstance(structured, dict) and structured.get("type") == "text"):
            continue
        listing = entry["message"]["content"][0]["content"]
        assert decode_numbered_read(listing) == structured["file"]["content"]
        checked += 1
    assert checked == 9

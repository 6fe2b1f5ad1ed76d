"""Bad inputs get a clear reason; nothing crashes and the other inputs go on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.layout import Workspace
from traj2env_assets.sources import register_sources
from traj2env_assets_tests.formats.logs import claude_line, write_jsonl


@pytest.fixture
def messy_folder(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    write_jsonl(source / "good.jsonl", [claude_line("user", "u1", "hello", ts="2026-03-01T10:00:00Z")])
    (source / "empty.jsonl").write_bytes(b"")
    (source / "binary.json").write_bytes(os.urandom(2048) + b"\x00\x01")
    (source / "x.json").mkdir()
    outside = tmp_path / "outside.jsonl"
    outside.write_text("{}\n")
    (source / "escape.jsonl").symlink_to(outside)
    (source / "dangling.jsonl").symlink_to(tmp_path / "missing.jsonl")
    (source / "garbage.jsonl").write_text("not json\n{also not\n")
    return source


def test_registration_rejects_each_bad_entry_with_a_reason(messy_folder: Path, tmp_path: Path) -> None:
    workspace = Workspace(root=tmp_path / "ws")
    registration = register_sources(workspace, messy_folder)
    reasons = {Path(item.path).name: item.reason for item in registration.rejected}
    assert reasons == {
        "x.json": "not_a_regular_file",
        "escape.jsonl": "symlink_outside_source",
        "dangling.jsonl": "unreadable",
        "empty.jsonl": "empty_file",
        "binary.json": "binary_file",
        "garbage.jsonl": "unrecognised_format",
    }
    assert registration.new == ["claude-code-sess-cc-1"]
    written = {p.relative_to(tmp_path).parts[0] for p in tmp_path.rglob("*") if p.is_file()}
    assert written <= {"source", "ws", "outside.jsonl"}


def test_single_100_mb_line_is_skipped_without_crashing(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("w") as handle:
        handle.write('{"type": "user", "text": "' + "a" * (100 * 1024 * 1024) + '"}\n')
    result = convert_source(path)
    assert result.record.status == "skipped"
    assert result.record.reason == "unrecognised_format"


def test_truncated_last_line_is_counted_and_the_rest_converts(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "t.jsonl",
        [
            claude_line("user", "u1", "hello", ts="2026-03-01T10:00:00Z"),
            claude_line("assistant", "a1", [{"type": "text", "text": "hi"}], ts="2026-03-01T10:00:01Z"),
        ],
    )
    path.write_text(path.read_text() + '{"type": "assistant", "uuid": "a2", "mess')
    result = convert_source(path)
    assert result.record.status == "converted"
    assert result.record.steps == 2
    assert result.record.skipped_lines == 1


@pytest.mark.parametrize(
    "text,reason",
    [
        (
            '{"schema_version": "ATIF-v1.7", "agent": {"name": "a", "version": "1"}, "steps": [{"step_id": 2, "source": "user", "message": "x"}]}',
            "invalid_trajectory",
        ),
        ('{"schema_version": "ATIF-v1.7", "agent": {"name": "a", "version": "1"}, "steps": []}', "invalid_trajectory"),
        (
            '{"schema_version": "ATIF-v1.7", "agent": {"name": "a", "version": "1"}, "steps": [{"step_id": 1, "source": "user", "message": "x", "tool_calls": []}]}',
            "invalid_trajectory",
        ),
        (
            '{"schema_version": "ATIF-v1.7", "agent": {"name": "a", "version": "1"}, "steps": [{"step_id": 1, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "a", "function_name": "f", "arguments": {}}], "observation": {"results": [{"source_call_id": "b", "content": ""}]}}]}',
            "invalid_trajectory",
        ),
        (
            '{"schema_version": "ATIF-v9.9", "agent": {"name": "a", "version": "1"}, "steps": [{"step_id": 1, "source": "user", "message": "x"}]}',
            "invalid_trajectory",
        ),
    ],
    ids=["step-ids-not-1-n", "no-steps", "agent-field-on-user-step", "unmatched-source-call-id", "unknown-version"],
)
def test_atif_rules_are_enforced(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(text)
    result = convert_source(path)
    assert (result.record.status, result.record.reason) == ("skipped", reason)
    assert result.record.detail

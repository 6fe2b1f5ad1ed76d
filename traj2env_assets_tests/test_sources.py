"""Partition keys: safe, readable, stable; the registry keeps one key per file."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from traj2env_assets.layout import Workspace
from traj2env_assets.sources import register_sources, safe_key
from traj2env_assets_tests.formats import real_shapes
from traj2env_assets_tests.formats.logs import claude_line, write_jsonl


@given(st.text(max_size=300))
def test_keys_are_always_safe(text: str) -> None:
    key = safe_key(text)
    assert key
    assert "/" not in key and ".." not in key
    assert not any(ch.isspace() or ord(ch) < 32 for ch in key)
    assert len(key) <= 96
    assert safe_key(text) == key


def test_keys_of_the_real_shapes_are_their_session_ids_and_stable(tmp_path: Path) -> None:
    source = tmp_path / "src"
    real_shapes.write_all(source)
    first = register_sources(Workspace(root=tmp_path / "a"), source)
    second = register_sources(Workspace(root=tmp_path / "b"), source)
    assert first.new == second.new
    assert f"pi-{real_shapes.PI_SESSION}" in first.new
    assert f"codex-{real_shapes.CODEX_SESSION}" in first.new
    assert f"claude-code-{real_shapes.CLAUDE_EDIT_SESSION}" in first.new


def test_collision_gets_a_content_hash_and_reruns_keep_keys(tmp_path: Path) -> None:
    source = tmp_path / "src"
    write_jsonl(source / "a" / "one.jsonl", [claude_line("user", "u1", "first", ts="2026-03-01T10:00:00Z")])
    write_jsonl(source / "b" / "two.jsonl", [claude_line("user", "u1", "second", ts="2026-03-01T10:00:00Z")])
    workspace = Workspace(root=tmp_path / "ws")
    first = register_sources(workspace, source)
    assert first.new[0] == "claude-code-sess-cc-1"
    assert first.new[1].startswith("claude-code-sess-cc-1-") and len(first.new[1]) == len(first.new[0]) + 9
    again = register_sources(workspace, source)
    assert again.new == [] and again.changed == [] and sorted(again.unchanged) == sorted(first.new)


def test_changed_content_keeps_its_key(tmp_path: Path) -> None:
    source = tmp_path / "src"
    path = write_jsonl(source / "s.jsonl", [claude_line("user", "u1", "v1", ts="2026-03-01T10:00:00Z")])
    workspace = Workspace(root=tmp_path / "ws")
    key = register_sources(workspace, source).new[0]
    write_jsonl(path, [claude_line("user", "u1", "version two", ts="2026-03-01T10:00:00Z")])
    changed = register_sources(workspace, source)
    assert changed.changed == [key] and changed.new == []


def test_subagent_logs_belong_to_their_session(tmp_path: Path) -> None:
    source = tmp_path / "src"
    write_jsonl(source / "sess.jsonl", [claude_line("user", "u1", "hi", ts="2026-03-01T10:00:00Z")])
    write_jsonl(
        source / "sess" / "subagents" / "agent-1.jsonl", [claude_line("user", "s1", "sub", ts="2026-03-01T10:00:00Z")]
    )
    registration = register_sources(Workspace(root=tmp_path / "ws"), source)
    assert registration.new == ["claude-code-sess-cc-1"]


def test_limit_registers_the_first_n_files_in_path_order_and_a_rerun_keeps_them(tmp_path: Path) -> None:
    source = tmp_path / "src"
    for name in ("c", "a", "b"):
        write_jsonl(
            source / f"{name}.jsonl",
            [claude_line("user", f"u-{name}", name, ts="2026-03-01T10:00:00Z", sessionId=f"s-{name}")],
        )
    workspace = Workspace(root=tmp_path / "ws")

    first = register_sources(workspace, source, limit=2)
    assert first.new == ["claude-code-s-a", "claude-code-s-b"]
    again = register_sources(workspace, source, limit=2)
    assert (again.new, again.unchanged) == ([], ["claude-code-s-a", "claude-code-s-b"])
    unlimited = register_sources(workspace, source)
    assert unlimited.new == ["claude-code-s-c"]

"""Newer Claude Code layout: ``<session>.jsonl``, ``<session>/subagents/agent-<id>.jsonl``
and ``agent-<id>.meta.json`` beside it; the metadata belongs to the sub-agent, and a
sub-agent working under another directory has that directory as its project."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.layout import Workspace
from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets.sources import discover_source_files, register_sources
from traj2env_assets_tests.formats.logs import claude_line, tool_result, tool_use, write_jsonl

SESSION = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
PROJECT = "/home/dev/calc"
OTHER = "/home/dev/scratch-worktree"


def _layout(source: Path, agent_cwd: str = PROJECT) -> Path:
    """A session whose Task call spawned sub-agent ``a1``, which writes ``notes.md``."""
    session = write_jsonl(
        source / f"{SESSION}.jsonl",
        [
            claude_line("user", "u1", "Write notes.", ts="2026-03-01T10:00:00Z", sessionId=SESSION),
            claude_line(
                "assistant",
                "a1",
                [
                    tool_use(
                        "toolu_task", "Task", prompt="write notes", description="notes", subagent_type="general-purpose"
                    )
                ],
                ts="2026-03-01T10:00:01Z",
                sessionId=SESSION,
            ),
            claude_line(
                "user",
                "u2",
                [tool_result("toolu_task", "wrote notes.md")],
                ts="2026-03-01T10:00:09Z",
                sessionId=SESSION,
            ),
            claude_line(
                "assistant",
                "a2",
                [tool_use("toolu_ls", "Bash", command="ls")],
                ts="2026-03-01T10:00:10Z",
                sessionId=SESSION,
            ),
            claude_line(
                "user", "u3", [tool_result("toolu_ls", "notes.md")], ts="2026-03-01T10:00:11Z", sessionId=SESSION
            ),
        ],
    )
    folder = source / SESSION / "subagents"
    sub: dict[str, Any] = {"sessionId": SESSION, "agentId": "a1", "isSidechain": True, "cwd": agent_cwd}
    write_jsonl(
        folder / "agent-a1.jsonl",
        [
            claude_line("user", "s1", "write notes", ts="2026-03-01T10:00:02Z", **sub),
            claude_line(
                "assistant",
                "s2",
                [tool_use("toolu_w", "Write", file_path=f"{agent_cwd}/notes.md", content="# Notes\n")],
                ts="2026-03-01T10:00:03Z",
                **sub,
            ),
            claude_line("user", "s3", [tool_result("toolu_w", "File created")], ts="2026-03-01T10:00:04Z", **sub),
        ],
    )
    meta = {"agentType": "general-purpose", "toolUseId": "toolu_task", "description": "notes"}
    (folder / "agent-a1.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return session


def test_meta_json_is_the_subagents_metadata_not_an_input(tmp_path: Path) -> None:
    source = tmp_path / "src"
    _layout(source)
    found, rejected = discover_source_files(source)
    assert found == [(source / f"{SESSION}.jsonl").resolve()]
    assert rejected == []
    registration = register_sources(Workspace(root=tmp_path / "ws"), source)
    assert registration.new == [f"claude-code-{SESSION}"]
    assert registration.rejected == []


def test_flat_meta_json_beside_its_log_is_not_rejected(tmp_path: Path) -> None:
    source = tmp_path / "src"
    _layout(source)
    for path in (source / SESSION / "subagents").iterdir():
        path.rename(source / path.name)
    (source / SESSION / "subagents").rmdir()
    (source / SESSION).rmdir()
    found, rejected = discover_source_files(source)
    assert [p.name for p in found] == [f"{SESSION}.jsonl"]
    assert rejected == []


def test_meta_json_links_the_subagent_and_rides_on_it(tmp_path: Path) -> None:
    trajectory = convert_source(_layout(tmp_path / "src")).trajectory
    assert trajectory is not None
    (sub,) = trajectory.subagent_trajectories or []
    assert sub.trajectory_id == "agent-a1"
    assert sub.extra is not None
    assert sub.extra["subagent_meta"] == {
        "agentType": "general-purpose",
        "toolUseId": "toolu_task",
        "description": "notes",
    }
    results = [r for step in trajectory.steps if step.observation for r in step.observation.results]
    assert results[0].subagent_trajectory_ref is not None
    assert results[0].subagent_trajectory_ref[0].trajectory_id == "agent-a1"


def test_unreadable_meta_json_leaves_the_subagent_unlinked_but_converted(tmp_path: Path) -> None:
    session = _layout(tmp_path / "src")
    (tmp_path / "src" / SESSION / "subagents" / "agent-a1.meta.json").write_text("{not json", encoding="utf-8")
    trajectory = convert_source(session).trajectory
    assert trajectory is not None
    (sub,) = trajectory.subagent_trajectories or []
    assert "subagent_meta" not in (sub.extra or {})


def test_subagent_in_the_project_edits_the_sessions_files(tmp_path: Path) -> None:
    trajectory = convert_source(_layout(tmp_path / "src")).trajectory
    assert trajectory is not None
    record = replay_trajectory(trajectory).record
    assert record.files["notes.md"].state == "present"
    assert record.subagent_projects == {}


def test_subagent_under_another_directory_has_its_own_project(tmp_path: Path) -> None:
    trajectory = convert_source(_layout(tmp_path / "src", agent_cwd=OTHER)).trajectory
    assert trajectory is not None
    write_record(replay_trajectory(trajectory), tmp_path / "r")
    record = ReplayRecord.load(tmp_path / "r").record
    assert record.project_root == PROJECT
    assert record.fidelity.unsafe_paths == 0
    assert "notes.md" not in record.files
    project = record.subagent_projects["agent-a1"]
    assert project.project_root == OTHER
    assert project.files["notes.md"].state == "present"
    assert project.fidelity.edits_applied == 1

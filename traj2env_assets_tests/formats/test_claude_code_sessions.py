"""Claude Code file layouts: resumed sessions keep their own id; flat sub-agent files nest."""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.layout import Workspace
from traj2env_assets.sources import register_sources
from traj2env_assets_tests.formats.logs import claude_line, tool_result, tool_use, write_jsonl

OLD = "11111111-2222-4333-8444-555555555555"
NEW = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"


def _resumed(source: Path) -> Path:
    """A session file named by its own id whose first lines are history copied from ``OLD``."""
    return write_jsonl(
        source / f"{NEW}.jsonl",
        [
            claude_line("user", "u1", "first request", ts="2026-03-01T10:00:00Z", sessionId=OLD),
            claude_line(
                "assistant", "a1", [{"type": "text", "text": "done"}], ts="2026-03-01T10:00:01Z", sessionId=OLD
            ),
            claude_line("user", "u2", "second request", ts="2026-03-02T09:00:00Z", sessionId=NEW),
        ],
    )


def test_resumed_session_takes_the_files_own_id(tmp_path: Path) -> None:
    source = tmp_path / "src"
    path = _resumed(source)
    write_jsonl(
        source / f"{OLD}.jsonl", [claude_line("user", "u1", "first request", ts="2026-03-01T10:00:00Z", sessionId=OLD)]
    )
    trajectory = convert_source(path).trajectory
    assert trajectory is not None
    assert trajectory.session_id == NEW
    registration = register_sources(Workspace(root=tmp_path / "ws"), source)
    assert sorted(registration.new) == sorted([f"claude-code-{NEW}", f"claude-code-{OLD}"])


def _parent_with_flat_agent(source: Path, agent_session: str = NEW) -> Path:
    parent = write_jsonl(
        source / f"{NEW}.jsonl",
        [
            claude_line("user", "u1", "Investigate.", ts="2026-03-01T10:00:00Z", sessionId=NEW),
            claude_line(
                "assistant",
                "a1",
                [tool_use("task1", "Task", prompt="look", description="d")],
                ts="2026-03-01T10:00:01Z",
                sessionId=NEW,
            ),
            claude_line(
                "user",
                "u2",
                [tool_result("task1", "found it")],
                ts="2026-03-01T10:00:05Z",
                sessionId=NEW,
                toolUseResult={"agentId": "f00d"},
            ),
        ],
    )
    write_jsonl(
        source / "agent-f00d.jsonl",
        [
            claude_line(
                "user",
                "s1",
                "look",
                ts="2026-03-01T10:00:02Z",
                sessionId=agent_session,
                agentId="f00d",
                isSidechain=True,
            ),
            claude_line(
                "assistant",
                "s2",
                [{"type": "text", "text": "found it"}],
                ts="2026-03-01T10:00:03Z",
                sessionId=agent_session,
                agentId="f00d",
                isSidechain=True,
            ),
        ],
    )
    return parent


def test_flat_subagent_file_nests_in_its_parent(tmp_path: Path) -> None:
    source = tmp_path / "src"
    parent = _parent_with_flat_agent(source)
    trajectory = convert_source(parent).trajectory
    assert trajectory is not None
    assert [sub.trajectory_id for sub in trajectory.subagent_trajectories or []] == ["agent-f00d"]
    results = [r for s in trajectory.steps if s.observation for r in s.observation.results]
    assert results[0].subagent_trajectory_ref is not None
    assert results[0].subagent_trajectory_ref[0].trajectory_id == "agent-f00d"
    assert register_sources(Workspace(root=tmp_path / "ws"), source).new == [f"claude-code-{NEW}"]


def test_flat_subagent_file_rewritten_for_another_session_leaves_it(tmp_path: Path) -> None:
    """What an agent file names is cached by the file's identity, so a rewrite is seen."""
    source = tmp_path / "src"
    parent = _parent_with_flat_agent(source)
    trajectory = convert_source(parent).trajectory
    assert trajectory is not None
    assert len(trajectory.subagent_trajectories or []) == 1
    write_jsonl(
        source / "agent-f00d.jsonl",
        [
            claude_line(
                "user",
                "s1",
                "look elsewhere",
                ts="2026-03-01T10:00:02Z",
                sessionId=OLD,
                agentId="f00d",
                isSidechain=True,
            )
        ],
    )
    rewritten = convert_source(parent).trajectory
    assert rewritten is not None
    assert rewritten.subagent_trajectories is None


def test_flat_subagent_file_without_its_parent_is_its_own_partition(tmp_path: Path) -> None:
    source = tmp_path / "src"
    _parent_with_flat_agent(source, agent_session=OLD)
    new = register_sources(Workspace(root=tmp_path / "ws"), source).new
    assert sorted(new) == sorted([f"claude-code-{NEW}", "claude-code-agent-f00d"])


def test_model_name_is_the_model_that_answered_not_the_synthetic_placeholder(tmp_path: Path) -> None:
    lines = [claude_line("user", "u0", "go", ts="2026-03-01T10:00:00Z")]
    for index in range(3):
        lines.append(
            claude_line(
                "assistant",
                f"a{index}",
                [{"type": "text", "text": f"reply {index}"}],
                ts=f"2026-03-01T10:00:0{index + 1}Z",
            )
        )
    error = claude_line(
        "assistant", "ae", [{"type": "text", "text": "API Error: 529 overloaded"}], ts="2026-03-01T10:00:09Z"
    )
    error["message"]["model"] = "<synthetic>"
    lines.append(error)
    result = convert_source(write_jsonl(tmp_path / "s.jsonl", lines))
    assert result.record.model_name == "claude-sonnet-4-6"
    assert result.trajectory is not None
    assert result.trajectory.agent.model_name == "claude-sonnet-4-6"
    assert result.trajectory.steps[-1].model_name is None

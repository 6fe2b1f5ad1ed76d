"""A name, id, version, model or directory of the wrong JSON type on one line is left out,
not fatal: the session still converts (found by differential fuzzing: a dict where Codex
writes the model crashed the converter, and an int session id dropped the whole session)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from traj2env_assets.formats.convert import convert_source
from traj2env_assets_tests.formats.logs import claude_line, codex_line, tool_result, tool_use, write_jsonl


def _codex(path: Path, mangled: object) -> Path:
    return write_jsonl(
        path,
        [
            codex_line("session_meta", {"id": mangled, "cli_version": mangled, "cwd": mangled, "model": mangled}),
            codex_line("turn_context", {"cwd": mangled, "model": mangled, "effort": mangled}),
            codex_line(
                "response_item",
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
            ),
            codex_line(
                "response_item",
                {
                    "type": "local_shell_call",
                    "call_id": "c1",
                    "action": {"command": ["ls"], "working_directory": mangled},
                },
            ),
            codex_line("turn_context", {"cwd": "/home/dev/calc", "model": "gpt-5.3-codex", "effort": "high"}),
            codex_line(
                "response_item",
                {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}', "call_id": "c2"},
            ),
        ],
    )


def test_codex_mangled_scalars_are_left_out(tmp_path: Path) -> None:
    for index, mangled in enumerate([{"a": 1}, ["x"], 7, True, ""]):
        result = convert_source(_codex(tmp_path / f"rollout-{index}.jsonl", mangled))
        assert result.record.status == "converted", (mangled, result.record.detail)
        trajectory = result.trajectory
        assert trajectory is not None
        assert trajectory.session_id == f"rollout-{index}"  # the file's stem, as for a missing id
        assert trajectory.agent.version == "unknown"
        assert trajectory.agent.model_name == "gpt-5.3-codex"
        first, second = (step for step in trajectory.steps if step.tool_calls)
        assert first.tool_calls is not None and second.tool_calls is not None
        assert first.model_name is None
        assert first.reasoning_effort == (7 if mangled == 7 else None)  # a number is an effort ATIF takes
        assert "cwd" not in (first.tool_calls[0].extra or {})
        assert (second.model_name, second.reasoning_effort) == ("gpt-5.3-codex", "high")
        assert second.tool_calls[0].extra == {"cwd": "/home/dev/calc"}


def test_claude_code_mangled_scalars_are_left_out(tmp_path: Path) -> None:
    bad = claude_line("assistant", "a1", [tool_use("t1", "Bash", command="ls")], ts="2026-03-01T10:00:01Z", cwd=[1])  # type: ignore[arg-type]  # a mangled cwd
    bad["version"] = {"v": 2}
    bad["message"]["model"] = {"name": "x"}
    lines = [
        claude_line("user", "u1", "fix it", ts="2026-03-01T10:00:00Z", cwd=7),  # type: ignore[arg-type]  # a mangled cwd
        bad,
        claude_line("user", "u2", [tool_result("t1", "ok")], ts="2026-03-01T10:00:02Z"),
        claude_line("assistant", "a2", [{"type": "text", "text": "done"}], ts="2026-03-01T10:00:03Z"),
    ]
    result = convert_source(write_jsonl(tmp_path / "session.jsonl", lines))
    assert result.record.status == "converted", result.record.detail
    trajectory = result.trajectory
    assert trajectory is not None
    assert trajectory.agent.version == "2.1.27"
    assert trajectory.agent.model_name == "claude-sonnet-4-6"
    assert trajectory.extra is not None
    assert trajectory.extra["cwd"] == "/home/dev/calc"
    call_step = next(step for step in trajectory.steps if step.tool_calls)
    assert call_step.model_name is None
    assert call_step.tool_calls is not None
    assert call_step.tool_calls[0].extra is None


def test_pi_mangled_model_is_left_out(tmp_path: Path) -> None:
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "pi-1", "timestamp": "2026-03-01T10:00:00Z", "cwd": "/home/dev/calc"},
        {
            "type": "message",
            "id": "m1",
            "parentId": None,
            "timestamp": "2026-03-01T10:00:01Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
        },
        {
            "type": "message",
            "id": "m2",
            "parentId": "m1",
            "timestamp": "2026-03-01T10:00:02Z",
            "message": {"role": "assistant", "model": {"id": "x"}, "content": [{"type": "text", "text": "done"}]},
        },
    ]
    result = convert_source(write_jsonl(tmp_path / "pi.jsonl", lines))
    assert result.record.status == "converted", result.record.detail
    assert result.record.model_name is None
    assert result.trajectory is not None
    assert [step.model_name for step in result.trajectory.steps if step.source == "agent"] == [None]

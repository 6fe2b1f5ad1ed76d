"""Hand-made logs: each native tool maps to an ATIF call with the extras later stages need."""

from __future__ import annotations

import json
from pathlib import Path

import atif

from traj2env_assets.formats.convert import convert_source
from traj2env_assets_tests.formats.logs import claude_line, codex_line, tool_result, tool_use, write_jsonl


def _calls_and_results(
    trajectory: atif.Trajectory,
) -> tuple[dict[str, atif.ToolCall], dict[str | None, atif.ObservationResult]]:
    calls: dict[str, atif.ToolCall] = {}
    results: dict[str | None, atif.ObservationResult] = {}
    for step in trajectory.steps:
        for call in step.tool_calls or []:
            calls[call.tool_call_id] = call
        for result in step.observation.results if step.observation else []:
            results[result.source_call_id] = result
    return calls, results


def test_claude_code_tools_map_with_extras(tmp_path: Path) -> None:
    lines = [
        claude_line("user", "u1", "Create calc.py and make the tests pass.", ts="2026-03-01T10:00:00Z"),
        claude_line(
            "assistant",
            "a1",
            [tool_use("t1", "Write", file_path="/home/dev/calc/calc.py", content="x = 1\n")],
            ts="2026-03-01T10:00:01Z",
        ),
        claude_line(
            "user",
            "u2",
            [tool_result("t1", "File created successfully at: /home/dev/calc/calc.py")],
            ts="2026-03-01T10:00:02Z",
            toolUseResult={
                "type": "create",
                "filePath": "/home/dev/calc/calc.py",
                "content": "x = 1\n",
                "originalFile": None,
            },
        ),
        claude_line(
            "assistant",
            "a2",
            [tool_use("t2", "Bash", command="python -m pytest -q")],
            ts="2026-03-01T10:00:03Z",
            cwd="/home/dev/calc/tests",
        ),
        claude_line(
            "user",
            "u3",
            [tool_result("t2", "Exit code 1\nF\n1 failed in 0.01s", is_error=True)],
            ts="2026-03-01T10:00:04Z",
        ),
        claude_line(
            "assistant",
            "a3",
            [
                tool_use(
                    "t3", "Edit", file_path="/home/dev/calc/calc.py", old_string="1", new_string="2", replace_all=False
                )
            ],
            ts="2026-03-01T10:00:05Z",
        ),
        claude_line(
            "user",
            "u4",
            [tool_result("t3", "The file /home/dev/calc/calc.py has been updated successfully.")],
            ts="2026-03-01T10:00:06Z",
            toolUseResult={"filePath": "/home/dev/calc/calc.py", "originalFile": "x = 1\n"},
        ),
        claude_line(
            "assistant", "a4", [tool_use("t4", "Read", file_path="/home/dev/calc/calc.py")], ts="2026-03-01T10:00:07Z"
        ),
        claude_line(
            "user",
            "u5",
            [tool_result("t4", "     1\u2192x = 2\n")],
            ts="2026-03-01T10:00:08Z",
            toolUseResult={
                "type": "text",
                "file": {
                    "filePath": "/home/dev/calc/calc.py",
                    "content": "x = 2\n",
                    "numLines": 1,
                    "startLine": 1,
                    "totalLines": 1,
                },
            },
        ),
        claude_line(
            "assistant",
            "a5",
            [
                tool_use(
                    "t5",
                    "MultiEdit",
                    file_path="/home/dev/calc/calc.py",
                    edits=[{"old_string": "2", "new_string": "3"}],
                )
            ],
            ts="2026-03-01T10:00:09Z",
        ),
        claude_line(
            "user",
            "u6",
            [tool_result("t5", "<tool_use_error>File has not been read yet.</tool_use_error>", is_error=True)],
            ts="2026-03-01T10:00:10Z",
        ),
        {"type": "summary", "summary": "s", "leafUuid": "u6"},
        {"type": "brand-new-line-type", "uuid": "z", "sessionId": "sess-cc-1"},
        # Repeated history after a summary: same message id and tool_use id again.
        claude_line(
            "assistant",
            "a1-again",
            [tool_use("t1", "Write", file_path="/home/dev/calc/calc.py", content="x = 1\n")],
            ts="2026-03-01T10:00:01Z",
            message_id="msg_a1",
        ),
        claude_line("user", "u1-again", "Create calc.py and make the tests pass.", ts="2026-03-01T10:00:00Z"),
    ]
    path = write_jsonl(tmp_path / "session.jsonl", lines)
    path.write_text(path.read_text() + "not json at all\n[1, 2]\n")
    result = convert_source(path)
    assert result.record.status == "converted", result.record.detail
    trajectory = result.trajectory
    assert trajectory is not None
    calls, results = _calls_and_results(trajectory)
    assert [calls[i].function_name for i in ("t1", "t2", "t3", "t4", "t5")] == [
        "Write",
        "Bash",
        "Edit",
        "Read",
        "MultiEdit",
    ]
    assert calls["t2"].extra == {"cwd": "/home/dev/calc/tests"}
    assert results["t2"].extra == {"is_error": True, "exit_code": 1}
    assert results["t1"].extra is not None and results["t3"].extra is not None
    assert results["t4"].extra is not None and results["t5"].extra is not None
    assert results["t3"].extra["original_file"] == "x = 1\n"
    assert "original_file" not in results["t1"].extra, "null originalFile on create stays absent"
    assert results["t4"].extra["file_content"] == "x = 2\n"
    assert results["t5"].extra["is_error"] is True
    assert [step.source for step in trajectory.steps].count("user") == 1
    assert result.record.skipped_lines == 2
    assert result.record.unknown_line_types == 1
    assert result.record.duplicate_tool_calls == 1
    assert trajectory.session_id == "sess-cc-1"
    assert trajectory.agent.extra == {"cwd": "/home/dev/calc"}


def test_claude_code_subagents_are_nested(tmp_path: Path) -> None:
    main = write_jsonl(
        tmp_path / "sess-cc-1.jsonl",
        [
            claude_line("user", "u1", "Investigate.", ts="2026-03-01T10:00:00Z"),
            claude_line(
                "assistant",
                "a1",
                [tool_use("task1", "Task", prompt="look", description="d")],
                ts="2026-03-01T10:00:01Z",
            ),
            claude_line(
                "user",
                "u2",
                [tool_result("task1", "found it")],
                ts="2026-03-01T10:00:05Z",
                toolUseResult={"agentId": "abc"},
            ),
        ],
    )
    write_jsonl(
        tmp_path / "sess-cc-1" / "subagents" / "agent-abc.jsonl",
        [
            claude_line("user", "s1", "look", ts="2026-03-01T10:00:02Z", isSidechain=True),
            claude_line(
                "assistant", "s2", [{"type": "text", "text": "found it"}], ts="2026-03-01T10:00:03Z", isSidechain=True
            ),
        ],
    )
    trajectory = convert_source(main).trajectory
    assert trajectory is not None and trajectory.subagent_trajectories is not None
    assert [sub.trajectory_id for sub in trajectory.subagent_trajectories] == ["agent-abc"]
    _, results = _calls_and_results(trajectory)
    assert results["task1"].subagent_trajectory_ref is not None
    assert results["task1"].subagent_trajectory_ref[0].trajectory_id == "agent-abc"


def test_codex_tool_shapes_and_exit_codes(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: calc.py\n+x = 1\n*** End Patch\n"
    lines = [
        codex_line(
            "session_meta",
            {"id": "sess-codex-1", "cwd": "/home/dev/calc", "cli_version": "0.104.0", "originator": "codex_cli_rs"},
        ),
        codex_line("turn_context", {"cwd": "/home/dev/calc", "model": "gpt-5.3-codex", "effort": "medium"}),
        codex_line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}],
            },
        ),
        codex_line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix calc."}]},
        ),
        codex_line(
            "response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Run tests first."}]}
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "pytest -q", "workdir": "/home/dev/calc/sub"}),
                "call_id": "c1",
            },
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": "Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 1\nOutput:\n1 failed",
            },
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q"]}),
                "call_id": "c2",
            },
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c2",
                "output": json.dumps({"output": "1 passed", "metadata": {"exit_code": 0, "duration_seconds": 0.3}}),
            },
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call",
                "name": "shell_command",
                "arguments": json.dumps({"command": "ls"}),
                "call_id": "c3",
            },
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c3",
                "output": "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nls: no",
            },
        ),
        codex_line(
            "response_item",
            {
                "type": "local_shell_call",
                "call_id": "c4",
                "status": "completed",
                "action": {"type": "exec", "command": ["cat", "calc.py"], "working_directory": "/home/dev/calc"},
            },
        ),
        codex_line(
            "response_item",
            {"type": "custom_tool_call", "status": "completed", "call_id": "c5", "name": "apply_patch", "input": patch},
        ),
        codex_line(
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": "c5",
                "output": "Success. Updated the following files:\nA calc.py\n",
            },
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call",
                "name": "write_stdin",
                "arguments": json.dumps({"session_id": 3, "chars": "q"}),
                "call_id": "c6",
            },
        ),
        codex_line(
            "event_msg",
            {
                "type": "token_count",
                "info": {"last_token_usage": {"input_tokens": 100, "output_tokens": 10, "cached_input_tokens": 50}},
            },
        ),
        codex_line(
            "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
        ),
    ]
    trajectory = convert_source(write_jsonl(tmp_path / "rollout.jsonl", lines)).trajectory
    assert trajectory is not None
    calls, results = _calls_and_results(trajectory)
    assert calls["c1"].extra is not None and calls["c2"].extra is not None
    assert calls["c1"].extra["cwd"] == "/home/dev/calc/sub"
    assert calls["c2"].extra["cwd"] == "/home/dev/calc"
    assert results["c1"].extra == {"exit_code": 1, "is_error": True}
    assert results["c2"].extra is not None and results["c3"].extra is not None
    assert results["c2"].content == "1 passed" and results["c2"].extra["exit_code"] == 0
    assert results["c3"].extra["exit_code"] == 2
    assert calls["c4"].function_name == "local_shell_call" and calls["c4"].arguments["command"] == ["cat", "calc.py"]
    assert calls["c5"].arguments == {"input": patch}
    assert calls["c6"].arguments == {"session_id": 3, "chars": "q"}
    users = [step.message for step in trajectory.steps if step.source == "user"]
    assert users == ["Fix calc."]
    first_call_step = next(step for step in trajectory.steps if step.tool_calls)
    assert first_call_step.reasoning_content == "Run tests first."
    assert first_call_step.model_name == "gpt-5.3-codex"
    assert trajectory.session_id == "sess-codex-1"


def test_pi_current_format_follows_active_branch(tmp_path: Path) -> None:
    def msg(entry_id: str, parent: str | None, message: dict) -> dict:
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-03-01T10:00:00Z",
            "message": message,
        }

    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "sess-pi-1",
            "timestamp": "2026-03-01T10:00:00Z",
            "cwd": "/home/dev/calc",
        },
        msg("e1", None, {"role": "user", "content": "Fix calc.", "timestamp": 1}),
        msg(
            "e2",
            "e1",
            {
                "role": "assistant",
                "model": "m",
                "content": [{"type": "toolCall", "id": "p1", "name": "bash", "arguments": {"command": "npm test"}}],
            },
        ),
        msg(
            "e3",
            "e2",
            {
                "role": "toolResult",
                "toolCallId": "p1",
                "toolName": "bash",
                "content": [{"type": "text", "text": "fail\n\nCommand exited with code 1"}],
                "isError": True,
            },
        ),
        # An abandoned branch from e3 ...
        msg(
            "x1",
            "e3",
            {
                "role": "assistant",
                "model": "m",
                "content": [
                    {"type": "toolCall", "id": "dead", "name": "write", "arguments": {"path": "a.js", "content": "no"}}
                ],
            },
        ),
        # ... and the active one.
        msg(
            "e4",
            "e3",
            {
                "role": "assistant",
                "model": "m",
                "content": [
                    {
                        "type": "toolCall",
                        "id": "p2",
                        "name": "edit",
                        "arguments": {"path": "calc.js", "edits": [{"oldText": "-", "newText": "+"}]},
                    }
                ],
            },
        ),
        msg(
            "e5",
            "e4",
            {
                "role": "toolResult",
                "toolCallId": "p2",
                "toolName": "edit",
                "content": [{"type": "text", "text": "Successfully replaced 1 block(s) in calc.js."}],
                "isError": False,
            },
        ),
        msg(
            "e6",
            "e5",
            {
                "role": "bashExecution",
                "command": "git status",
                "output": "clean",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
            },
        ),
    ]
    trajectory = convert_source(write_jsonl(tmp_path / "pi.jsonl", lines)).trajectory
    assert trajectory is not None
    calls, results = _calls_and_results(trajectory)
    assert set(calls) == {"p1", "p2"}
    assert results["p1"].extra == {"is_error": True, "exit_code": 1}
    assert calls["p2"].arguments["edits"][0]["oldText"] == "-"
    assert calls["p1"].extra == {"cwd": "/home/dev/calc"}
    assert trajectory.steps[-1].extra == {"user_shell_command": "git status"}


def test_format_option_forces_a_converter(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "x.jsonl", [claude_line("user", "u1", "hi", ts="2026-03-01T10:00:00Z")])
    assert convert_source(path, "pi").record.reason == "no_steps"
    assert convert_source(path, "claude-code").record.status == "converted"

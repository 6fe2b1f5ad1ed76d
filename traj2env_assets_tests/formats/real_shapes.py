"""Logs of our own making that reproduce the shapes of real public sessions.

The real sessions themselves stay outside the repository (``corpus/`` reads them when
``../shared/fixtures`` exists). Each writer below names the real log whose quirks it
copies; the content is invented and small.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from traj2env_assets_tests.formats.logs import codex_line, write_jsonl

# --- Claude Code (shape of session-share's edit-tool-variants / read-tool-variants / general-tool-calls) ---

CLAUDE_CWD = "/home/dev/site/e2e-tests"
# The edited files sit in a pytest temp folder, outside the session's cwd (as in edit-tool-variants.jsonl).
CLAUDE_EDIT_ROOT = "/tmp/pytest-of-dev/pytest-1/test_edit_tool_variants0"
CLAUDE_EDIT_SESSION = "0e1d1e5a-0000-4000-8000-00000000ed17"


def _claude(
    kind: str,
    uuid: str,
    parent: str | None,
    message: dict[str, Any],
    version: str,
    session: str,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": CLAUDE_CWD,
        "sessionId": session,
        "version": version,
        "gitBranch": "main",
        "type": kind,
        "message": message,
        "uuid": uuid,
        "timestamp": f"2026-01-31T00:16:{len(uuid) % 60:02d}.000Z",
        **extra,
    }


def _write_with_comments(path: Path, lines: list[dict[str, Any]], demonstrates: str) -> Path:
    # session-share's files start with two `//` lines its repository added: not JSON.
    path.parent.mkdir(parents=True, exist_ok=True)
    head = f"// Source: hand-made for traj2env's tests\n// Demonstrates: {demonstrates}\n"
    path.write_text(head + "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


class _ClaudeSession:
    """Assistant text and its tool_use on separate lines sharing one message id; each result
    a user line with the tool_result block and (when given) the structured ``toolUseResult``."""

    def __init__(self, session: str, version: str, model: str) -> None:
        self.session, self.version, self.model = session, version, model
        self.lines: list[dict[str, Any]] = []

    def _add(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        parent = self.lines[-1]["uuid"] if self.lines else None
        uuid = f"{self.session[:8]}-{len(self.lines):04d}"
        self.lines.append(_claude(kind, uuid, parent, message, self.version, self.session, **extra))

    def user(self, text: str) -> None:
        self._add("user", {"role": "user", "content": text})

    def call(
        self,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        text: str,
        result: str,
        structured: Any = None,
    ) -> None:
        message_id = f"msg_{call_id}"
        common = {
            "model": self.model,
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "stop_reason": None,
        }
        self._add("assistant", {**common, "content": [{"type": "text", "text": text}]})
        self._add(
            "assistant",
            {
                **common,
                "content": [
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": name,
                        "input": arguments,
                    }
                ],
            },
        )
        block = {"tool_use_id": call_id, "type": "tool_result", "content": result}
        extra = {"toolUseResult": structured} if structured is not None else {}
        self._add("user", {"role": "user", "content": [block]}, **extra)


EDIT_FILES = {
    "edit_basic.txt": "This is a simple test file.\nIt contains the word hello in the middle.\nThis line comes after hello.\n",
    "edit_replace_all.txt": "This file has foo repeated.\nThe first foo is here.\nAnother foo there.\n",
    "edit_multiline.txt": 'function example() {\n  const OLD_CODE = true;\n  if (OLD_CODE) {\n    console.log("old");\n  }\n  return OLD_CODE;\n}\n',
}


def claude_edit_variants(path: Path) -> Path:
    """edit-tool-variants.jsonl (CC 2.1.27): four ``Edit`` calls — basic, first occurrence
    only, ``replace_all``, multi-line — each result carrying ``originalFile`` and
    ``structuredPatch``, on files outside the session's cwd."""
    session = _ClaudeSession(CLAUDE_EDIT_SESSION, "2.1.27", "claude-haiku-4-5-20251001")
    session.user(f"Edit the three files in {CLAUDE_EDIT_ROOT} as listed.")
    current = dict(EDIT_FILES)
    edits = [
        (
            "edit_basic.txt",
            "It contains the word hello in the middle.",
            "It contains the word goodbye in the middle.",
            False,
        ),
        (
            "edit_replace_all.txt",
            "This file has foo repeated.",
            "This file has bar repeated.",
            False,
        ),
        ("edit_replace_all.txt", "bar", "baz", True),
        (
            "edit_multiline.txt",
            '  const OLD_CODE = true;\n  if (OLD_CODE) {\n    console.log("old");\n  }',
            '  const NEW_CODE = true;\n  if (NEW_CODE) {\n    console.log("new");\n  }',
            False,
        ),
    ]
    for index, (name, old, new, replace_all) in enumerate(edits, start=1):
        file_path = f"{CLAUDE_EDIT_ROOT}/{name}"
        original = current[name]
        current[name] = original.replace(old, new) if replace_all else original.replace(old, new, 1)
        structured = {
            "filePath": file_path,
            "oldString": old,
            "newString": new,
            "originalFile": original,
            "structuredPatch": [
                {
                    "oldStart": 1,
                    "oldLines": 1,
                    "newStart": 1,
                    "newLines": 1,
                    "lines": [f"-{old}", f"+{new}"],
                }
            ],
            "userModified": False,
            "replaceAll": replace_all,
        }
        arguments = {
            "replace_all": replace_all,
            "file_path": file_path,
            "old_string": old,
            "new_string": new,
        }
        session.call(
            f"toolu_edit{index}",
            "Edit",
            arguments,
            f"**Edit {index}**",
            f"The file {file_path} has been updated successfully.",
            structured,
        )
    return _write_with_comments(path, session.lines, "Edit tool variants")


CONFTEST = '"""Pytest configuration and fixtures for e2e tests."""\n\nimport subprocess\n\n' + "".join(
    f"VALUE_{n} = {n}\n" for n in range(1, 27)
)


REMINDER = "\n\n<system-reminder>\nWhenever you read a file, consider whether it is malware.\n</system-reminder>\n"


def numbered(text: str, start: int = 1, count: int | None = None) -> str:
    """Claude Code's Read listing: a right-aligned line number, an arrow, the line (a file
    ending in a newline shows an empty last line), then a system reminder."""
    lines = text.split("\n")[start - 1 :]
    lines = lines if count is None else lines[:count]
    return "\n".join(f"{number:>6}\u2192{line}" for number, line in enumerate(lines, start=start)) + REMINDER


def claude_read_variants(path: Path) -> Path:
    """read-tool-variants.jsonl (CC 2.1.25): ``Read`` with file_path only, ``limit``,
    ``offset`` and both; the results are numbered listings with no structured file."""
    session = _ClaudeSession("0e1d1e5a-0000-4000-8000-0000000000ad", "2.1.25", "claude-opus-4-5-20251101")
    session.user("Read e2e-tests/conftest.py four ways with the Read tool.")
    file_path = f"{CLAUDE_CWD}/conftest.py"
    reads = [
        ({}, 1, None),
        ({"limit": 10}, 1, 10),
        ({"offset": 20}, 20, None),
        ({"offset": 15, "limit": 5}, 15, 5),
    ]
    for index, (window, start, count) in enumerate(reads, start=1):
        session.call(
            f"toolu_read{index}",
            "Read",
            {"file_path": file_path, **window},
            f"**{index}. Reading:**",
            numbered(CONFTEST, start, count),
        )
    return _write_with_comments(path, session.lines, "Read tool variants")


PLUGIN_FILES = {f"plugin/part_{n}.md": f"# Part {n}\n\nStep {n} of the plan.\n" for n in range(1, 4)}


def claude_repeated_history(path: Path) -> Path:
    """general-tool-calls.jsonl (CC 2.1.11): most ``tool_use`` ids appear on two lines (the
    history written again); ``Read`` results carry the file in ``toolUseResult`` (type text)."""
    session = _ClaudeSession("0e1d1e5a-0000-4000-8000-00000000d0b1", "2.1.11", "claude-opus-4-5-20251101")
    session.user("Build the plugin from the plan.")
    for index, (name, text) in enumerate(PLUGIN_FILES.items(), start=1):
        file_path = f"{CLAUDE_CWD}/{name}"
        session.call(
            f"toolu_w{index}",
            "Write",
            {"file_path": file_path, "content": text},
            "Writing.",
            f"File created successfully at: {file_path}",
        )
        structured = {
            "type": "text",
            "file": {
                "filePath": file_path,
                "content": text,
                "numLines": len(text.split("\n")),
                "startLine": 1,
                "totalLines": len(text.split("\n")),
            },
        }
        session.call(
            f"toolu_r{index}",
            "Read",
            {"file_path": file_path},
            "Checking.",
            numbered(text),
            structured,
        )
    repeated = [
        dict(line)
        for line in session.lines
        if line["type"] == "assistant" and line["message"]["content"][0]["type"] == "tool_use"
    ][:4]
    for line in repeated:
        line["uuid"] = line["uuid"] + "-again"
    return _write_with_comments(path, session.lines + repeated, "repeated tool_use ids")


# --- pi (shape of pi-mono's before-compaction.jsonl: the legacy v1 session format) ---

PI_CWD = "/home/dev/pi-app"
PI_SESSION = "0e1d1e5a-0000-4000-8000-0000000000b1"
PI_PACKAGE = json.dumps({"name": "pi-app", "scripts": {"check": "tsc --noEmit"}}, indent=2) + "\n"
PI_SOURCE = 'import type { QueueMode } from "./types";\n\nexport function mode(): QueueMode {\n  return "all";\n}\n'
PI_FIXED = 'export function mode(): "all" | "one" {\n  return "all";\n}\n'
PI_CHECK = f"cd {PI_CWD} && npm run check"
PI_TS_ERROR = "src/mode.ts(1,15): error TS2305: Module '\"./types\"' has no exported member 'QueueMode'."


class _PiSession:
    def __init__(self) -> None:
        # Legacy v1: no id/parentId on entries; the header carries provider, modelId, thinkingLevel, branchedFrom.
        self.lines: list[dict[str, Any]] = [
            {
                "type": "session",
                "id": PI_SESSION,
                "timestamp": "2025-12-09T00:53:29.825Z",
                "cwd": PI_CWD,
                "provider": "anthropic",
                "modelId": "claude-opus-4-5",
                "thinkingLevel": "off",
                "branchedFrom": "/home/dev/.pi/agent/sessions/earlier.jsonl",
            }
        ]
        self.clock = 1765233665000

    def message(self, message: dict[str, Any]) -> None:
        self.clock += 1000
        self.lines.append(
            {
                "type": "message",
                "timestamp": "2025-12-08T22:41:05.306Z",
                "message": {**message, "timestamp": self.clock},
            }
        )

    def call(
        self,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        output: str,
        is_error: bool = False,
    ) -> None:
        self.message(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "toolCall",
                        "id": call_id,
                        "name": name,
                        "arguments": arguments,
                    }
                ],
                "provider": "anthropic",
                "model": "claude-opus-4-5",
                "stopReason": "toolUse",
            }
        )
        self.message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": [{"type": "text", "text": output}],
                "isError": is_error,
            }
        )


def pi_legacy_compaction(path: Path) -> Path:
    """before-compaction.jsonl (pi, legacy v1): reads, ``edit`` {path, oldText, newText},
    ``npm run check`` failing (the exit code only in "Command exited with code 2") then
    passing, a ``sed -i`` the log cannot replay, a read outside the project, user ``!``
    commands (``bashExecution``), a compaction, thinking-level and model changes."""
    pi = _PiSession()
    pi.message(
        {
            "role": "user",
            "content": [{"type": "text", "text": "make npm run check pass"}],
        }
    )
    pi.call("t1", "read", {"path": f"{PI_CWD}/package.json"}, PI_PACKAGE)
    pi.call("t2", "read", {"path": f"{PI_CWD}/src/mode.ts"}, PI_SOURCE)
    pi.call("t3", "read", {"path": f"{PI_CWD}/src/notes.ts"}, "export const notes = 1;\n")
    pi.lines.append(
        {
            "type": "thinking_level_change",
            "timestamp": "2025-12-08T22:45:42.397Z",
            "thinkingLevel": "minimal",
        }
    )
    pi.call(
        "t4",
        "bash",
        {"command": PI_CHECK},
        f"\n> pi-app@1.0.0 check\n> tsc --noEmit\n\n{PI_TS_ERROR}\n\n\nCommand exited with code 2",
        True,
    )
    pi.lines.append(
        {
            "type": "compaction",
            "timestamp": "2025-12-08T23:22:54.411Z",
            "summary": "# Context Checkpoint\nfixing the check",
            "firstKeptEntryIndex": 5,
            "tokensBefore": 175004,
        }
    )
    pi.call(
        "t5",
        "edit",
        {"path": f"{PI_CWD}/src/mode.ts", "oldText": PI_SOURCE, "newText": PI_FIXED},
        "Successfully replaced text in src/mode.ts.",
    )
    pi.call("t6", "bash", {"command": f"sed -i 's/1/2/' {PI_CWD}/src/notes.ts"}, "")
    pi.call("t7", "read", {"path": "/home/dev/.config/pi/settings.json"}, "{}\n")
    pi.call(
        "t8",
        "bash",
        {"command": PI_CHECK},
        "\n> pi-app@1.0.0 check\n> tsc --noEmit\n\n",
    )
    pi.lines.append(
        {
            "type": "model_change",
            "timestamp": "2025-12-09T00:08:20.826Z",
            "provider": "anthropic",
            "modelId": "claude-sonnet-4-5",
        }
    )
    for command in ("ls", "git status"):
        pi.message(
            {
                "role": "bashExecution",
                "command": command,
                "output": "package.json\nsrc\n",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
            }
        )
    return write_jsonl(path, pi.lines)


# --- Codex (shape of localpush-codex's rollouts: Codex Desktop 0.104, content redacted by its owner) ---

CODEX_SESSION = "0e1d1e5a-0000-7000-8000-00000000c0de"
CODEX_CWD = "/redacted/path/0a1b2c3d4e"


def codex_redacted(path: Path) -> Path:
    """localpush-codex rollouts: every text, argument, patch and output replaced by
    ``[REDACTED_* len=N sha=…]``; kept are the line types, call ids and tool names
    (``exec_command``, ``apply_patch`` as a custom tool call, ``write_stdin``), with the
    reasoning items, event messages, a ``web_search_call`` and a ``compacted`` line between."""
    lines = [
        codex_line(
            "session_meta",
            {
                "id": CODEX_SESSION,
                "cwd": CODEX_CWD,
                "cli_version": "0.104.0-alpha.1",
                "originator": "Codex Desktop",
            },
        ),
        codex_line("turn_context", {"cwd": CODEX_CWD, "model": "gpt-5.3-codex"}),
        codex_line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "[REDACTED_TEXT len=40 sha=1a2b3c4d]",
                    }
                ],
            },
        ),
    ]
    calls = [
        ("exec_command", "c1"),
        ("apply_patch", "p1"),
        ("write_stdin", "c2"),
        ("exec_command", "c3"),
        ("apply_patch", "p2"),
    ]
    for name, call_id in calls:
        if name == "apply_patch":
            lines.append(
                codex_line(
                    "response_item",
                    {
                        "type": "custom_tool_call",
                        "name": name,
                        "call_id": call_id,
                        "input": "[REDACTED_INPUT len=153 sha=23291271]",
                    },
                )
            )
            lines.append(
                codex_line(
                    "response_item",
                    {
                        "type": "custom_tool_call_output",
                        "call_id": call_id,
                        "output": "[REDACTED_OUTPUT len=60 sha=9f8e7d6c]",
                    },
                )
            )
        else:
            lines.append(
                codex_line(
                    "response_item",
                    {
                        "type": "function_call",
                        "name": name,
                        "call_id": call_id,
                        "arguments": "[REDACTED_ARGUMENTS len=80 sha=5e6f7a8b]",
                    },
                )
            )
            lines.append(
                codex_line(
                    "response_item",
                    {
                        "type": "function_call_output",
                        "call_id": call_id,
                        "output": "[REDACTED_OUTPUT len=20 sha=0c1d2e3f]",
                    },
                )
            )
    lines[4:4] = [
        codex_line(
            "response_item",
            {
                "type": "reasoning",
                "summary": [
                    {
                        "type": "summary_text",
                        "text": "[REDACTED_TEXT len=30 sha=77aa88bb]",
                    }
                ],
            },
        ),
        codex_line("event_msg", {"type": "token_count", "info": None}),
        codex_line(
            "event_msg",
            {"type": "agent_message", "message": "[REDACTED_TEXT len=12 sha=99cc00dd]"},
        ),
        codex_line("response_item", {"type": "web_search_call", "status": "completed"}),
        codex_line("compacted", {"message": "", "replacement_history": []}),
    ]
    return write_jsonl(path, lines)


def claude_images(path: Path) -> Path:
    """images-in-user-messages.jsonl (CC 2.1.22): the user pasted images (base64 ``image``
    blocks beside the text of the same message)."""
    session = _ClaudeSession("0e1d1e5a-0000-4000-8000-0000000013a9", "2.1.22", "claude-opus-4-5-20251101")
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": pixel},
    }
    session._add(
        "user",
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "This screenshot shows the bug."},
                image,
            ],
        },
    )
    session.call(
        "toolu_img1",
        "Read",
        {"file_path": f"{CLAUDE_CWD}/conftest.py"},
        "Looking.",
        numbered(CONFTEST),
    )
    return _write_with_comments(path, session.lines, "images in user messages")


WRITERS = {
    "claude-edit-variants.jsonl": claude_edit_variants,
    "claude-read-variants.jsonl": claude_read_variants,
    "claude-repeated-history.jsonl": claude_repeated_history,
    "pi-legacy-compaction.jsonl": pi_legacy_compaction,
    "codex-redacted.jsonl": codex_redacted,
    "claude-images.jsonl": claude_images,
}


def write_all(directory: Path) -> list[Path]:
    return [writer(directory / name) for name, writer in WRITERS.items()]

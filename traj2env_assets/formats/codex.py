"""Codex rollout ``.jsonl`` -> ATIF-v1.7.

One agent step per assistant message and per tool call (``function_call``,
``custom_tool_call``, ``local_shell_call``). Outputs are paired by ``call_id``.
Exit codes are lifted from every output shape Codex has written: the legacy JSON
wrapper ``{"output", "metadata": {"exit_code"}}``, ``exec_command``'s
"Process exited with code N" and ``shell_command``'s "Exit code: N" header. Each
call keeps the directory it ran in (``workdir`` or the turn's ``cwd``) in
``extra.cwd``. Injected context (AGENTS.md, ``<environment_context>``) becomes
system steps so the user's own requests stay recognisable.

Three rollout shapes, by CLI era (all read by :func:`convert_codex`):

- envelope ``.jsonl`` (Rust CLI, Sept 2025 on): ``{"timestamp", "type", "payload"}``
  lines, the first a ``session_meta``;
- bare ``.jsonl`` (Rust CLI, mid 2025): a header line ``{"id", "timestamp",
  "instructions", "git"?, "cwd"?, "originator"?, "cli_version"?}``, then
  ``{"record_type": "state"}`` markers and Responses-API items with no envelope and no
  timestamp of their own;
- one ``.json`` document (TypeScript CLI, spring 2025): ``{"session": {"timestamp",
  "id", "instructions"}, "items": [...]}``.

Without a ``cwd`` in the header, the session's directory comes from the
``<cwd>`` of the injected ``<environment_context>``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import atif

from traj2env_assets.formats.builder import TrajectoryBuilder, line_stats_extra
from traj2env_assets.formats.jsonl import (
    LineStats,
    iter_json_objects,
    line_type,
    loads_like_stdlib,
    text_field,
    token_count,
)
from traj2env_assets.formats.text import blocks_to_text

FORMAT = "codex"
LINE_TYPES = {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}
_PROCESS_EXIT = re.compile(r"Process exited with code (-?\d+)")
_EXIT_HEADER = re.compile(r"^Exit code: (-?\d+)", re.MULTILINE)
_INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions")
_CONTEXT_CWD = re.compile(r"<cwd>([^<\n]+)</cwd>")
RESPONSE_ITEM_TYPES = {
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "web_search_call",
}
_LEGACY_HEADER_KEYS = {"instructions", "git", "originator", "cli_version"}
_TS_ROLLOUT_HEAD = re.compile(rb'\A\s*\{\s*"session"\s*:\s*\{\s*"(?:timestamp|id|instructions)"')


def looks_like_codex(obj: dict[str, Any]) -> bool:
    return line_type(obj) in LINE_TYPES and isinstance(obj.get("payload"), dict)


def looks_like_legacy_codex(obj: dict[str, Any]) -> bool:
    """A line only a mid-2025 bare rollout writes: its header or a state marker."""
    if obj.get("record_type") == "state":
        return True
    return (
        "type" not in obj
        and isinstance(obj.get("id"), str)
        and isinstance(obj.get("timestamp"), str)
        and bool(_LEGACY_HEADER_KEYS & obj.keys())
    )


def looks_like_typescript_rollout(head: bytes) -> bool:
    """The TypeScript CLI's ``rollout-<date>-<id>.json``: one document opening with ``"session"``."""
    return bool(_TS_ROLLOUT_HEAD.match(head))


def _is_bare_response_item(obj: dict[str, Any]) -> bool:
    return line_type(obj) in RESPONSE_ITEM_TYPES and "payload" not in obj and "message" not in obj


def parse_output(raw: Any) -> tuple[str, dict[str, Any]]:
    """Split a tool output into its text and the figures it carries (exit code, duration)."""
    text = raw if isinstance(raw, str) else blocks_to_text(raw)
    extra: dict[str, Any] = {}
    if text.startswith("{"):
        try:
            wrapped = loads_like_stdlib(text)
        except ValueError:
            wrapped = None
        if isinstance(wrapped, dict) and "output" in wrapped:
            metadata = wrapped.get("metadata")
            if not isinstance(metadata, dict):
                metadata = {}
            text = str(wrapped.get("output") or "")
            if isinstance(metadata.get("exit_code"), int):
                extra["exit_code"] = metadata["exit_code"]
            if isinstance(metadata.get("duration_seconds"), (int, float)):
                extra["duration_seconds"] = metadata["duration_seconds"]
    if "exit_code" not in extra:
        match = _PROCESS_EXIT.search(text) or _EXIT_HEADER.search(text)
        if match:
            extra["exit_code"] = int(match.group(1))
    if text.startswith(("apply_patch verification failed", "Failed to apply patch")):
        extra["is_error"] = True
    elif "exit_code" in extra:
        extra["is_error"] = extra["exit_code"] != 0
    return text, extra


def _decode_arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = loads_like_stdlib(raw)
        except ValueError:
            return {"raw": raw}
        return value if isinstance(value, dict) else {"raw": value}
    return {"raw": raw}


class _CodexReader:
    def __init__(self) -> None:
        self.builder = TrajectoryBuilder()
        self.session_id: str | None = None
        self.version: str | None = None
        self.session_cwd: str | None = None
        self.turn_cwd: str | None = None
        self.model: str | None = None
        self.effort: str | None = None
        self.pending_reasoning: list[str] = []
        self.extra: dict[str, Any] = {}
        self.compactions = 0

    def read_legacy(self, line: dict[str, Any], stats: LineStats, first: bool) -> bool:
        """A line of a bare rollout; False when it is none of its shapes."""
        if line.get("record_type") == "state":
            return True
        if first and looks_like_legacy_codex(line):
            self.extra["rollout_format"] = "bare-jsonl"
            self.read_entry("session_meta", line, line.get("timestamp"), stats)
            return True
        if _is_bare_response_item(line):
            self.read_entry("response_item", line, line.get("timestamp"), stats)
            return True
        return False

    def read_entry(self, kind: str, payload: dict[str, Any], timestamp: object, stats: LineStats) -> None:
        # The most frequent kinds first: this runs once per line.
        if kind == "response_item":
            self._read_response_item(payload, timestamp, stats)
        elif kind == "event_msg":
            if payload.get("type") == "token_count":
                self._read_token_count(payload)
        elif kind == "turn_context":
            self.turn_cwd = text_field(payload, "cwd") or self.turn_cwd
            self.model = text_field(payload, "model") or self.model
            self.effort = payload.get("effort") or self.effort
        elif kind == "session_meta":
            self.session_id = self.session_id or text_field(payload, "id") or text_field(payload, "session_id")
            self.version = self.version or text_field(payload, "cli_version")
            self.session_cwd = self.session_cwd or text_field(payload, "cwd")
            self.turn_cwd = self.turn_cwd or text_field(payload, "cwd")
            self.model = self.model or text_field(payload, "model")
            for key in ("originator", "model_provider"):
                if isinstance(payload.get(key), str):
                    self.extra[key] = payload[key]
        elif kind == "compacted":
            self.compactions += 1
            self.builder.add_message("system", "Context compacted.", timestamp, {"context_management": "compaction"})

    def _read_token_count(self, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        usage = info.get("last_token_usage") if isinstance(info, dict) else None
        step = self.builder.last_agent_step()
        if not isinstance(usage, dict) or step is None or step.metrics is not None:
            return
        step.metrics = {
            "prompt_tokens": token_count(usage.get("input_tokens")),
            "completion_tokens": token_count(usage.get("output_tokens")),
            "cached_tokens": token_count(usage.get("cached_input_tokens")),
        }

    def _context_cwd(self, text: str) -> None:
        if self.session_cwd is None and text.lstrip().startswith("<environment_context>"):
            match = _CONTEXT_CWD.search(text)
            if match:
                self.session_cwd = self.turn_cwd = match.group(1).strip()

    def _agent_step(self, timestamp: object, message: str = "") -> Any:
        reasoning = "\n\n".join(self.pending_reasoning) or None
        self.pending_reasoning = []
        return self.builder.add_agent_step(message, timestamp, self.model, reasoning, self.effort)

    def _read_response_item(self, payload: dict[str, Any], timestamp: object, stats: LineStats) -> None:
        item = payload.get("type")
        if item == "message":
            text = blocks_to_text(payload.get("content"))
            role = payload.get("role")
            if role == "assistant":
                self._agent_step(timestamp, text)
            elif role == "user" and not text.lstrip().startswith(_INJECTED_PREFIXES):
                self.builder.add_message("user", text, timestamp)
            elif text:
                self._context_cwd(text)
                self.builder.add_message("system", text, timestamp, {"role": role})
        elif item == "reasoning":
            summary = payload.get("summary")
            for part in summary if isinstance(summary, list) else []:
                if isinstance(part, dict) and part.get("text"):
                    self.pending_reasoning.append(str(part["text"]))
        elif item in ("function_call", "custom_tool_call"):
            call_id = payload.get("call_id")
            if not isinstance(call_id, str):
                stats.invalid_lines += 1
                return
            if item == "function_call":
                arguments = _decode_arguments(payload.get("arguments"))
            else:
                arguments = {"input": payload.get("input")}
            cwd = arguments.get("workdir") if isinstance(arguments.get("workdir"), str) else self.turn_cwd
            step = self._agent_step(timestamp)
            self.builder.add_tool_call(step, call_id, str(payload.get("name") or "unknown"), arguments, {"cwd": cwd})
        elif item == "local_shell_call":
            call_id = payload.get("call_id") or payload.get("id")
            action = payload.get("action")
            if not isinstance(action, dict):
                action = {}
            if not isinstance(call_id, str):
                stats.invalid_lines += 1
                return
            cwd = text_field(action, "working_directory") or self.turn_cwd
            step = self._agent_step(timestamp)
            self.builder.add_tool_call(step, call_id, "local_shell_call", action, {"cwd": cwd})
        elif item in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            call_id = payload.get("call_id")
            if isinstance(call_id, str):
                text, extra = parse_output(payload.get("output"))
                self.builder.add_tool_result(call_id, text, extra)
        elif item in ("web_search_call",):
            return
        else:
            stats.count_unknown(f"response_item/{item}")


def convert_codex(path: Path, data: bytes) -> atif.Trajectory:
    stats = LineStats()
    reader = _CodexReader()
    if looks_like_typescript_rollout(data[:4096]):
        _read_typescript_rollout(reader, data, stats)
    else:
        for index, line in enumerate(iter_json_objects(data, stats)):
            kind = line_type(line)
            payload = line.get("payload")
            if kind in LINE_TYPES and isinstance(payload, dict):  # looks_like_codex, inlined: once per line
                reader.read_entry(kind, payload, line.get("timestamp"), stats)
            elif not reader.read_legacy(line, stats, first=index == 0):
                stats.count_unknown(line.get("type"))
    if reader.builder.steps == 0:
        raise ValueError("no Codex messages or tool calls")
    agent = {
        "name": "codex",
        "version": reader.version or "unknown",
        "model_name": reader.builder.answering_model() or reader.model,
        "extra": {"cwd": reader.session_cwd} if reader.session_cwd else None,
    }
    extra = {
        "source_format": FORMAT,
        "cwd": reader.session_cwd,
        "compactions": reader.compactions or None,
        **reader.extra,
        **line_stats_extra(stats, reader.builder),
    }
    return reader.builder.build(agent, reader.session_id or path.stem, extra)


def _read_typescript_rollout(reader: _CodexReader, data: bytes, stats: LineStats) -> None:
    try:
        document = loads_like_stdlib(data)
    except ValueError as exc:
        raise ValueError(f"not a Codex rollout document: {exc}") from exc
    session = document.get("session") if isinstance(document, dict) else None
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(session, dict) or not isinstance(items, list):
        raise ValueError("a Codex rollout document needs a 'session' object and an 'items' list")
    reader.extra["rollout_format"] = "typescript-json"
    reader.read_entry("session_meta", session, session.get("timestamp"), stats)
    for item in items:
        if isinstance(item, dict) and _is_bare_response_item(item):
            reader.read_entry("response_item", item, item.get("timestamp"), stats)
        else:
            stats.count_unknown(item.get("type") if isinstance(item, dict) else type(item).__name__)

"""pi coding-agent session ``.jsonl`` -> ATIF-v1.7.

Legacy v1 files are linear. v2+ entries carry ``id``/``parentId``: only the active
branch (the path from the last entry back to the root) is converted, so abandoned
branches never reach replay. ``bash`` exit codes come from the "Command exited
with code N" line pi appends on failure; ``!cmd`` commands the user ran
(``bashExecution``) become system steps whose observation carries the command,
output and exit code (``extra.user_shell_command``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import atif

from traj2env_assets.formats.builder import TrajectoryBuilder, drop_none, line_stats_extra
from traj2env_assets.formats.jsonl import LineStats, iter_json_objects, line_type, text_field, token_count
from traj2env_assets.formats.text import blocks_to_text

FORMAT = "pi"
ENTRY_TYPES = {
    "session",
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
}
_COMMAND_EXIT = re.compile(r"Command exited with code (-?\d+)\s*$")


def looks_like_pi(obj: dict[str, Any]) -> bool:
    if obj.get("type") == "session" and "cwd" in obj:
        return True
    message = obj.get("message")
    return obj.get("type") == "message" and isinstance(message, dict) and "role" in message and "uuid" not in obj


def active_branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries on the path from the last entry to the root (v2+), or all entries (v1)."""
    with_ids = [entry for entry in entries if isinstance(entry.get("id"), str)]
    if not with_ids or not any("parentId" in entry for entry in with_ids):
        return entries
    by_id = {entry["id"]: entry for entry in with_ids}
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    current: dict[str, Any] | None = with_ids[-1]
    while current is not None and current["id"] not in seen:
        seen.add(current["id"])
        path.append(current)
        parent = current.get("parentId")
        current = by_id.get(parent) if isinstance(parent, str) else None
    return list(reversed(path))


def _metrics(usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return None
    cost = usage.get("cost")
    if not isinstance(cost, dict):
        cost = {}
    cache_read = token_count(usage.get("cacheRead"))
    return drop_none(
        {
            "prompt_tokens": token_count(usage.get("input")) + cache_read + token_count(usage.get("cacheWrite")),
            "completion_tokens": token_count(usage.get("output")),
            "cached_tokens": cache_read,
            "cost_usd": cost.get("total") if isinstance(cost.get("total"), (int, float)) else None,
        }
    )


def convert_pi(path: Path, data: bytes) -> atif.Trajectory:
    stats = LineStats()
    entries = list(iter_json_objects(data, stats))
    header = next((entry for entry in entries if entry.get("type") == "session"), {})
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
    builder = TrajectoryBuilder()
    model = header.get("modelId") if isinstance(header.get("modelId"), str) else None
    first_model = model
    tool_names: dict[str, str] = {}
    for entry in active_branch([entry for entry in entries if entry.get("type") != "session"]):
        kind = line_type(entry)
        timestamp = entry.get("timestamp")
        if kind == "model_change":
            model = entry["modelId"] if isinstance(entry.get("modelId"), str) else model
        elif kind == "compaction":
            builder.add_message(
                "system",
                str(entry.get("summary") or ""),
                timestamp,
                {"context_management": "compaction", "tokens_before": entry.get("tokensBefore")},
            )
        elif kind == "branch_summary":
            builder.add_message("system", str(entry.get("summary") or ""), timestamp, {"branch_summary": True})
        elif kind == "message" and isinstance(entry.get("message"), dict):
            model = _read_message(builder, entry["message"], timestamp, model, cwd, tool_names)
            first_model = first_model or model
        elif kind not in ENTRY_TYPES:
            stats.count_unknown(entry.get("type"))
    if builder.steps == 0:
        raise ValueError("no pi messages")
    agent = {
        "name": "pi",
        "version": str(header.get("version") or "unknown"),
        "model_name": builder.answering_model() or first_model,
        "extra": {"cwd": cwd} if cwd else None,
    }
    extra = {"source_format": FORMAT, "cwd": cwd, **line_stats_extra(stats, builder)}
    session_id = header.get("id") if isinstance(header.get("id"), str) else None
    return builder.build(agent, session_id, extra)


def _read_message(
    builder: TrajectoryBuilder,
    message: dict[str, Any],
    timestamp: object,
    model: str | None,
    cwd: str | None,
    tool_names: dict[str, str],
) -> str | None:
    role = message.get("role")
    if role == "user":
        text = blocks_to_text(message.get("content"))
        if text:
            builder.add_message("user", text, timestamp)
    elif role == "assistant":
        model = text_field(message, "model") or model
        content = message.get("content")
        if not isinstance(content, list):
            content = []
        text = "\n\n".join(
            str(block.get("text")) for block in content if isinstance(block, dict) and block.get("type") == "text"
        )
        thinking = "\n\n".join(
            str(block.get("thinking"))
            for block in content
            if isinstance(block, dict) and block.get("type") == "thinking" and block.get("thinking")
        )
        step = builder.add_agent_step(text, timestamp, model, thinking or None)
        step.metrics = _metrics(message.get("usage"))
        if message.get("stopReason") in ("error", "aborted", "length"):
            step.extra["stop_reason"] = message["stopReason"]
        for block in content:
            if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str):
                name = str(block.get("name") or "unknown")
                if builder.add_tool_call(step, block["id"], name, block.get("arguments") or {}, {"cwd": cwd}):
                    tool_names[block["id"]] = name
    elif role == "toolResult" and isinstance(message.get("toolCallId"), str):
        text = blocks_to_text(message.get("content"))
        extra: dict[str, Any] = {"is_error": bool(message.get("isError"))}
        match = _COMMAND_EXIT.search(text)
        if match and tool_names.get(message["toolCallId"]) == "bash":
            extra["exit_code"] = int(match.group(1))
        builder.add_tool_result(message["toolCallId"], text, extra)
    elif role == "bashExecution":
        command = str(message.get("command") or "")
        step = builder.add_message("system", f"!{command}", timestamp, {"user_shell_command": command})
        extra = {"exit_code": message.get("exitCode") if isinstance(message.get("exitCode"), int) else None}
        if message.get("cancelled"):
            extra["cancelled"] = True
        builder.add_observation(step, str(message.get("output") or ""), extra)
    elif role in ("custom", "branchSummary", "compactionSummary"):
        text = blocks_to_text(message.get("content") or message.get("summary"))
        if text:
            builder.add_message("system", text, timestamp, {"role": role})
    return model

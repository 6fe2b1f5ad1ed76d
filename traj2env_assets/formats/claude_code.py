"""Claude Code transcript ``.jsonl`` -> ATIF-v1.7.

Reads ``user``/``assistant`` lines. Assistant lines sharing ``message.id`` form one
agent step. Tool results are paired by ``tool_use_id`` with the step that made the
call. Claude Code repeats earlier history after a summary with new uuids; repeated
tool calls (same id), repeated assistant blocks (same message id and block) and
repeated user prompts (same timestamp and text) are dropped.

Kept in ``extra`` (see :mod:`traj2env_assets.formats.extras`): per-line ``cwd`` on
each tool call; ``is_error``, Bash ``exit_code`` (from the "Exit code N" header),
``original_file`` and Read ``file_content`` on results. Sub-agents in
``<session>/subagents/agent-*.jsonl``, or flat beside the session file (older CLIs:
``agent-<id>.jsonl`` whose lines carry the parent's ``sessionId`` and an ``agentId``),
are nested as ``subagent_trajectories``; a sub-agent's ``agent-<id>.meta.json`` (newer
CLIs) links it to the call that spawned it and is kept as its ``extra.subagent_meta``.

The session id is the file's own: Claude Code names each session file by its id, and a
resumed session's file starts with history copied from the session it resumed, whose
lines still carry the old id.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import atif
from pydantic import BaseModel, ConfigDict, ValidationError

from traj2env_assets.formats.builder import PendingStep, TrajectoryBuilder, drop_none, line_stats_extra
from traj2env_assets.formats.jsonl import LineStats, iter_json_objects, line_type, text_field, token_count
from traj2env_assets.formats.text import blocks_to_text

FORMAT = "claude-code"
SUBAGENT_META_SUFFIX = ".meta.json"
KNOWN_LINE_TYPES = {
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "progress",
    "queue-operation",
    "mode",
    "permission-mode",
    "attachment",
    "ai-title",
    "last-prompt",
    "custom-title",
}
_EXIT_CODE = re.compile(r"^Exit code (-?\d+)")
_SESSION_FILE_STEM = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_FLAT_SUBAGENT_HEAD_BYTES = 64 * 1024
# Claude Code writes its own error notices (API errors, interruptions) as assistant
# messages with this model name; no model produced them.
SYNTHETIC_MODEL = "<synthetic>"


def looks_like_claude_code(obj: dict[str, Any]) -> bool:
    return (
        isinstance(obj.get("sessionId"), str)
        and isinstance(obj.get("uuid"), str)
        and line_type(obj) in KNOWN_LINE_TYPES
    )


def _result_extra(block: dict[str, Any], tool_use_result: Any, tool_name: str | None) -> dict[str, Any]:
    is_error = bool(block.get("is_error"))
    extra: dict[str, Any] = {"is_error": is_error}
    if tool_name == "Bash" and is_error:
        match = _EXIT_CODE.match(blocks_to_text(block.get("content")))
        if match:
            extra["exit_code"] = int(match.group(1))
    if isinstance(tool_use_result, dict):
        original = tool_use_result.get("originalFile")
        if isinstance(original, str):
            extra["original_file"] = original
        file_info = tool_use_result.get("file")
        if isinstance(file_info, dict) and isinstance(file_info.get("content"), str):
            extra["file_content"] = file_info["content"]
            extra["file_start_line"] = file_info.get("startLine")
            extra["file_num_lines"] = file_info.get("numLines")
            extra["file_total_lines"] = file_info.get("totalLines")
        if tool_use_result.get("interrupted") is True:
            extra["interrupted"] = True
    return drop_none(extra)


def own_session_id(path: Path, lines: Iterable[dict[str, Any]]) -> str | None:
    """The file's own session id: its name when Claude Code named it (a UUID), else the
    first ``sessionId``; a flat sub-agent file is named by its own stem, not its parent's id."""
    if _SESSION_FILE_STEM.match(path.stem):
        return path.stem
    for line in lines:
        if isinstance(line.get("sessionId"), str):
            if isinstance(line.get("agentId"), str) and path.stem.startswith("agent-"):
                return path.stem
            return str(line["sessionId"])
    return None


def flat_subagent_parent(path: Path) -> Path | None:
    """The session file beside ``path`` that a flat ``agent-<id>.jsonl`` belongs to, if present."""
    session_id = _flat_subagent_session(path)
    if session_id is None:
        return None
    parent = path.parent / f"{session_id}.jsonl"
    return parent if parent != path and parent.is_file() else None


def _flat_subagent_session(path: Path) -> str | None:
    """The parent's session id that a flat ``agent-<id>.jsonl`` names on its first line with
    a ``sessionId``; None when ``path`` is not such a file."""
    if not _is_flat_subagent_name(path.name):
        return None
    try:
        return _session_named_by(str(path), path.stat())
    except OSError:
        return None


def _is_flat_subagent_name(name: str) -> bool:
    return name.startswith("agent-") and name.endswith(".jsonl")


def _session_named_by(path: str, status: os.stat_result) -> str | None:
    return _flat_subagent_head_session(path, (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns))


@functools.lru_cache(maxsize=1 << 16)
def _flat_subagent_head_session(path: str, identity: tuple[int, int, int, int]) -> str | None:
    """Cached by the file's identity (device, inode, size, modification time): converting each
    session of a folder asks about every agent file in it, and reading all their heads for
    every session made a folder of N sessions cost N² reads (200 sessions with 5 agents
    each: 20 s)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_FLAT_SUBAGENT_HEAD_BYTES)
    except OSError:
        return None
    for raw in head.split(b"\n"):
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and isinstance(line.get("sessionId"), str):
            if not isinstance(line.get("agentId"), str) or "/" in line["sessionId"]:
                return None
            return line["sessionId"]
    return None


def _flat_subagent_files(path: Path) -> list[Path]:
    """The flat ``agent-*.jsonl`` files beside ``path`` that name its session. One directory
    scan with plain names: pathlib's glob and Path sorting cost more than the rest of a
    conversion in a folder of thousands of files."""
    found: list[Path] = []
    try:
        with os.scandir(path.parent) as entries:
            for entry in entries:
                if entry.name == path.name or not _is_flat_subagent_name(entry.name):
                    continue
                try:
                    named = _session_named_by(entry.path, entry.stat())
                except OSError:
                    continue
                if named == path.stem:
                    found.append(Path(entry.path))
    except OSError:
        return []
    return sorted(found)


def _subagent_files(path: Path) -> list[Path]:
    folder = path.with_suffix("") / "subagents"
    nested = sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    return [p for p in [*nested, *_flat_subagent_files(path)] if p.is_file() and not p.is_symlink()]


class SubagentMeta(BaseModel):
    """``agent-<id>.meta.json`` beside a sub-agent log (newer CLIs): what spawned it."""

    model_config = ConfigDict(extra="allow")

    agentType: str | None = None
    toolUseId: str | None = None
    description: str | None = None


def subagent_meta_log(path: Path) -> Path | None:
    """The sub-agent log ``agent-<id>.jsonl`` whose metadata ``path`` is, when it exists."""
    name = path.name
    if not (name.startswith("agent-") and name.endswith(SUBAGENT_META_SUFFIX)):
        return None
    log = path.with_name(name[: -len(SUBAGENT_META_SUFFIX)] + ".jsonl")
    return log if log.is_file() else None


def _subagent_meta(log: Path) -> SubagentMeta | None:
    meta = log.with_suffix(SUBAGENT_META_SUFFIX)
    try:
        return SubagentMeta.model_validate_json(meta.read_bytes()) if meta.is_file() else None
    except (OSError, ValidationError):
        return None


def _subagent_links(metas: dict[Path, SubagentMeta]) -> dict[str, str]:
    """Map the spawning tool-use id to the sub-agent's trajectory id, from the metadata."""
    return {meta.toolUseId: file.stem for file, meta in metas.items() if meta.toolUseId}


def convert_claude_code(path: Path, data: bytes, *, is_subagent: bool = False) -> atif.Trajectory:
    stats = LineStats()
    lines = list(iter_json_objects(data, stats))
    has_main_thread = any(line.get("isSidechain") is False for line in lines)
    builder = TrajectoryBuilder()
    version: str | None = None
    first_cwd: str | None = None
    tool_names: dict[str, str] = {}
    messages: dict[str, _AgentMessage] = {}
    seen_blocks: set[tuple[str, Any, Any]] = set()
    seen_prompts: set[str] = set()
    subagent_files = [] if is_subagent else _subagent_files(path)
    metas = {file: meta for file in subagent_files if (meta := _subagent_meta(file)) is not None}
    subagent_by_call = _subagent_links(metas)
    # Sub-agents first, so results of the calls that spawned them can link to them.
    for file in subagent_files:
        try:
            child = convert_claude_code(file, file.read_bytes(), is_subagent=True)
        except ValueError:
            continue
        update: dict[str, Any] = {"trajectory_id": file.stem}
        if file in metas:
            update["extra"] = {**(child.extra or {}), "subagent_meta": metas[file].model_dump(exclude_none=True)}
        builder.subagents.append(child.model_copy(update=update))

    for line in lines:
        kind = line_type(line)
        if kind not in ("user", "assistant"):
            if kind not in KNOWN_LINE_TYPES:
                stats.count_unknown(line.get("type"))
            continue
        if has_main_thread and line.get("isSidechain") is True and not is_subagent:
            continue
        version = version or text_field(line, "version")
        first_cwd = first_cwd or text_field(line, "cwd")
        message = line.get("message")
        if not isinstance(message, dict):
            stats.invalid_lines += 1
            continue
        timestamp = line.get("timestamp")
        if kind == "assistant":
            _read_assistant_line(builder, line, message, timestamp, messages, seen_blocks, tool_names)
        else:
            _read_user_line(builder, line, message, timestamp, seen_prompts, tool_names, subagent_by_call)

    agent = {
        "name": "claude-code",
        "version": version or "unknown",
        "model_name": builder.answering_model(),
        "extra": {"cwd": first_cwd} if first_cwd else None,
    }
    extra = {"source_format": FORMAT, "cwd": first_cwd, **line_stats_extra(stats, builder)}
    if builder.steps == 0:
        raise ValueError("no Claude Code user or assistant messages")
    return builder.build(agent, own_session_id(path, lines), extra)


@dataclass(slots=True)
class _AgentMessage:
    """The agent step of one assistant message id, and the last usage its lines carried."""

    step: PendingStep
    usage: dict[str, Any] | None = None


def _read_assistant_line(
    builder: TrajectoryBuilder,
    line: dict[str, Any],
    message: dict[str, Any],
    timestamp: object,
    messages: dict[str, _AgentMessage],
    seen_blocks: set[tuple[str, Any, Any]],
    tool_names: dict[str, str],
) -> None:
    message_id = str(message.get("id") or line.get("uuid"))
    known = messages.get(message_id)
    if known is None:
        model = message.get("model")
        known = messages[message_id] = _AgentMessage(
            builder.add_agent_step(timestamp=timestamp, model_name=None if model == SYNTHETIC_MODEL else model)
        )
    step = known.step
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        # str(): a mangled line may put any JSON value where a string belongs.
        fingerprint = (message_id, str(kind), str(block.get("id") or block.get("text") or block.get("thinking")))
        if fingerprint in seen_blocks:
            if block.get("type") == "tool_use":
                builder.duplicate_tool_calls += 1
            continue
        seen_blocks.add(fingerprint)
        if kind == "text" and block.get("text") and isinstance(block["text"], str):
            step.message = "\n\n".join(filter(None, [step.message, block["text"]]))
        elif kind == "thinking" and block.get("thinking") and isinstance(block["thinking"], str):
            step.reasoning_content = "\n\n".join(filter(None, [step.reasoning_content, block["thinking"]]))
        elif kind == "tool_use" and isinstance(block.get("id"), str):
            name = str(block.get("name") or "unknown")
            if builder.add_tool_call(
                step, block["id"], name, block.get("input") or {}, {"cwd": text_field(line, "cwd")}
            ):
                tool_names[block["id"]] = name
    usage = message.get("usage")
    # One response is split over lines that each repeat usage; keep the fullest copy (the
    # last of equal ones). A line repeating the usage already read changes nothing.
    if isinstance(usage, dict) and usage != known.usage:
        known.usage = usage
        metrics = _metrics(usage)
        if step.metrics is None or metrics["completion_tokens"] >= step.metrics["completion_tokens"]:
            step.metrics = metrics


def _metrics(usage: dict[str, Any]) -> dict[str, int]:
    cache_read = token_count(usage.get("cache_read_input_tokens"))
    cache_creation = token_count(usage.get("cache_creation_input_tokens"))
    return {
        "prompt_tokens": token_count(usage.get("input_tokens")) + cache_read + cache_creation,
        "completion_tokens": token_count(usage.get("output_tokens")),
        "cached_tokens": cache_read,
    }


def _read_user_line(
    builder: TrajectoryBuilder,
    line: dict[str, Any],
    message: dict[str, Any],
    timestamp: object,
    seen_prompts: set[str],
    tool_names: dict[str, str],
    subagent_by_call: dict[str, str],
) -> None:
    content = message.get("content")
    blocks = content if isinstance(content, list) else None
    results = [b for b in blocks or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
    for block in results:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str):
            continue
        tool_use_result = line.get("toolUseResult")
        subagents = []
        agent_id = tool_use_result.get("agentId") if isinstance(tool_use_result, dict) else None
        if call_id in subagent_by_call:
            subagents.append(subagent_by_call[call_id])
        elif isinstance(agent_id, str):
            subagents.append(f"agent-{agent_id}")
        builder.add_tool_result(
            call_id,
            blocks_to_text(block.get("content")),
            _result_extra(block, tool_use_result, tool_names.get(call_id)),
            [ref for ref in subagents if ref in {s.trajectory_id for s in builder.subagents}] or None,
        )
    if results and len(results) == len(blocks or []):
        return
    text = blocks_to_text([b for b in blocks if b not in results] if blocks is not None else content)
    if not text:
        return
    prompt_key = f"{timestamp}\0{text}"
    if prompt_key in seen_prompts:
        return
    seen_prompts.add(prompt_key)
    extra = {"meta": True} if line.get("isMeta") else None
    if line.get("isCompactSummary"):
        extra = {**(extra or {}), "compact_summary": True}
    builder.add_message("user", text, timestamp, extra)

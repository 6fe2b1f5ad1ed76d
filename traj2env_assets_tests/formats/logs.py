"""Hand-made agent logs, one writer per format, for tool-mapping tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def claude_line(
    kind: str, uuid: str, content: Any, *, ts: str, cwd: str = "/home/dev/calc", **extra: Any
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update({"id": extra.pop("message_id", f"msg_{uuid}"), "model": "claude-sonnet-4-6"})
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": None,
        "isSidechain": False,
        "sessionId": "sess-cc-1",
        "version": "2.1.27",
        "cwd": cwd,
        "timestamp": ts,
        "message": message,
        **extra,
    }


def tool_use(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def tool_result(call_id: str, text: str, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    if is_error:
        block["is_error"] = True
    return block


def codex_line(kind: str, payload: dict[str, Any], ts: str = "2026-03-01T10:00:00Z") -> dict[str, Any]:
    return {"timestamp": ts, "type": kind, "payload": payload}

"""Hand-made ATIF trajectories for replay tests."""

from __future__ import annotations

from typing import Any

from atif import Trajectory

ROOT = "/home/dev/proj"


class SessionBuilder:
    """Appends steps in order; each tool call gets its result on the same step."""

    def __init__(self, cwd: str | None = ROOT, source_format: str = "claude-code", id_prefix: str = "call") -> None:
        self.cwd = cwd
        self.id_prefix = id_prefix
        self.source_format = source_format
        self.steps: list[dict[str, Any]] = []

    def user(self, text: str) -> SessionBuilder:
        self.steps.append({"source": "user", "message": text, "timestamp": "2026-03-01T10:00:00Z"})
        return self

    def say(self, text: str) -> SessionBuilder:
        """An assistant message without tool calls."""
        self.steps.append({"source": "agent", "message": text})
        return self

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        result: str | None = "ok",
        *,
        is_error: bool | None = None,
        exit_code: int | None = None,
        original_file: str | None = None,
        file_content: str | None = None,
        cwd: str | None = None,
    ) -> SessionBuilder:
        call_id = f"{self.id_prefix}_{len(self.steps)}"
        call: dict[str, Any] = {"tool_call_id": call_id, "function_name": name, "arguments": arguments}
        if cwd is not None:
            call["extra"] = {"cwd": cwd}
        step: dict[str, Any] = {"source": "agent", "message": "", "tool_calls": [call]}
        if result is not None:
            extra = {
                key: value
                for key, value in {
                    "is_error": is_error,
                    "exit_code": exit_code,
                    "original_file": original_file,
                    "file_content": file_content,
                }.items()
                if value is not None
            }
            observation: dict[str, Any] = {"source_call_id": call_id, "content": result}
            if extra:
                observation["extra"] = extra
            step["observation"] = {"results": [observation]}
        self.steps.append(step)
        return self

    def bash(self, command: str, output: str = "", exit_code: int = 0, **kwargs: Any) -> SessionBuilder:
        name = "Bash" if self.source_format == "claude-code" else "bash"
        return self.call(name, {"command": command}, output, exit_code=exit_code, is_error=exit_code != 0, **kwargs)

    def build(self) -> Trajectory:
        steps = [{"step_id": index, **step} for index, step in enumerate(self.steps, start=1)]
        extra: dict[str, Any] = {"source_format": self.source_format}
        if self.cwd is not None:
            extra["cwd"] = self.cwd
        return Trajectory.model_validate(
            {
                "schema_version": "ATIF-v1.7",
                "session_id": "test-session",
                "agent": {"name": "test", "version": "1"},
                "steps": steps,
                "extra": extra,
            }
        )

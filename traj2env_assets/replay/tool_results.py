"""Read a tool call's recorded result: its text, error flag and exit code.

Exit codes come from ``ObservationResult.extra.exit_code`` when the converter lifted
it, otherwise from the text each tool prints: Claude Code ``Exit code N``, pi
``Command exited with code N``, Codex ``Process exited with code N`` / ``Exit code: N``
or the legacy JSON ``{"output": ..., "metadata": {"exit_code": N}}``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from atif import ObservationResult
from pydantic import ValidationError

from traj2env_assets.formats.extras import ObservationExtra

_EXIT_PATTERNS = (
    re.compile(r"Process exited with code (-?\d+)"),
    re.compile(r"Command exited with code (-?\d+)\s*$"),
    re.compile(r"\AExit code:? (-?\d+)"),
    re.compile(r"^Exit code:? (-?\d+)$", re.MULTILINE),
)
_REJECTED = re.compile(
    r"<tool_use_error>|The user doesn't want to proceed|haven't granted it yet|File has not been read yet|"
    r"apply_patch verification failed|Failed to apply patch|user rejected|Permission denied|"
    r"^Error: |\AError:|was rejected|Request interrupted by user",
    re.MULTILINE,
)
_NOT_RUN = re.compile(
    r"<tool_use_error>|The user doesn't want to proceed|haven't granted it yet|user rejected|was rejected"
)
# Codex unified exec and shell_command put a header before the command's own output.
_CODEX_HEADER = re.compile(
    r"\A(?:Chunk ID: [^\n]*\n)?(?:Wall time: [^\n]*\n)?"
    r"(?:Process exited with code -?\d+\n|Process running with session ID \d+\n|Exit code: -?\d+\n)"
    r"(?:Wall time: [^\n]*\n)?(?:Original token count: \d+\n)?Output:\n"
)
_SESSION_ID = re.compile(r"Process running with session ID (\d+)")


@dataclass
class CallResult:
    present: bool
    text: str = ""
    is_error: bool = False
    exit_code: int | None = None
    extra: ObservationExtra | None = None

    @property
    def output(self) -> str:
        """The command's own output: ``text`` without a Codex exec header."""
        header = _CODEX_HEADER.match(self.text)
        return self.text[header.end() :] if header else self.text

    @property
    def rejected(self) -> bool:
        """The tool did not do what was asked: an error flag, a refusal, or no result."""
        return not self.present or self.is_error or bool(_REJECTED.search(self.text[:2000]))

    @property
    def failed(self) -> bool:
        """No result, or one flagged as an error (for reads, whose text is file content
        and must not be searched for refusal wording)."""
        return not self.present or self.is_error or self.text.startswith("<tool_use_error>")

    @property
    def not_run(self) -> bool:
        """A shell call that never ran: no result, or a refusal before execution."""
        return not self.present or bool(_NOT_RUN.search(self.text[:2000]))

    @property
    def running_session(self) -> str | None:
        match = _SESSION_ID.search(self.text)
        return match.group(1) if match else None


def result_text(result: ObservationResult) -> str:
    content = result.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(part.text or "" for part in content if part.type == "text")


def _unwrap_codex_json(text: str) -> tuple[str, int | None]:
    if not text.startswith('{"output"'):
        return text, None
    try:
        payload = json.loads(text)
    except ValueError:
        return text, None
    if not isinstance(payload, dict) or not isinstance(payload.get("output"), str):
        return text, None
    metadata = payload.get("metadata")
    code = metadata.get("exit_code") if isinstance(metadata, dict) else None
    return payload["output"], code if isinstance(code, int) else None


def read_result(result: ObservationResult | None) -> CallResult:
    if result is None:
        return CallResult(present=False)
    try:
        extra = ObservationExtra.model_validate(result.extra or {})
    except ValidationError:
        extra = ObservationExtra()
    text, exit_code = _unwrap_codex_json(result_text(result))
    if extra.exit_code is not None:
        exit_code = extra.exit_code
    if exit_code is None:
        for pattern in _EXIT_PATTERNS:
            match = pattern.search(text)
            if match:
                exit_code = int(match.group(1))
                break
    return CallResult(present=True, text=text, is_error=bool(extra.is_error), exit_code=exit_code, extra=extra)

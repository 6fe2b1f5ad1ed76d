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
# Refusal wording is plain phrases: `in` finds each far faster than one regex of
# alternatives scans for all of them.
_NOT_RUN_PHRASES = (
    "<tool_use_error>",
    "The user doesn't want to proceed",
    "haven't granted it yet",
    "user rejected",
    "was rejected",
)
_REJECTED_PHRASES = (
    *_NOT_RUN_PHRASES,
    "File has not been read yet",
    "apply_patch verification failed",
    "Failed to apply patch",
    "Permission denied",
    "Request interrupted by user",
)
_SCANNED_CHARS = 2000
_PATCH_APPLIED = "Success. Updated the following files:"
# Errors Codex itself reports instead of a command's output (legacy logs keep them as
# plain text where a run's JSON would be): its own apply_patch refusing the patch, and
# a sandboxed run that exited non-zero ("failed in sandbox ... exit code: 1, ...").
_CODEX_OWN_ERRORS = ("error: ", "failed in sandbox ")
"""Refusals are looked for at the start of a result only."""
# Codex unified exec and shell_command put a header before the command's own output.
_CODEX_HEADER = re.compile(
    r"\A(?:Chunk ID: [^\n]*\n)?(?:Wall time: [^\n]*\n)?"
    r"(?:Process exited with code -?\d+\n|Process running with session ID \d+\n|Exit code: -?\d+\n)"
    r"(?:Wall time: [^\n]*\n)?(?:Original token count: \d+\n)?Output:\n"
)
_RUNNING = "Process running with session ID "
_SESSION_ID = re.compile(_RUNNING + r"(\d+)")
_NO_EXTRA = ObservationExtra()


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
        return not self.present or self.is_error or _rejection_wording(self.text[:_SCANNED_CHARS])

    @property
    def failed(self) -> bool:
        """No result, or one flagged as an error (for reads, whose text is file content
        and must not be searched for refusal wording)."""
        return not self.present or self.is_error or self.text.startswith("<tool_use_error>")

    @property
    def not_run(self) -> bool:
        """A shell call that never ran: no result, or a refusal before execution."""
        head = self.text[:_SCANNED_CHARS]
        return not self.present or any(phrase in head for phrase in _NOT_RUN_PHRASES)

    @property
    def patch_refused(self) -> bool:
        """An ``apply_patch`` inside a shell command did not apply: no success line, and
        a refusal, a non-zero exit or an error Codex reported instead of the run."""
        if _PATCH_APPLIED in self.text:
            return False
        return self.rejected or self.exit_code not in (None, 0) or self.output.startswith(_CODEX_OWN_ERRORS)

    @property
    def running_session(self) -> str | None:
        if _RUNNING not in self.text:
            return None
        match = _SESSION_ID.search(self.text)
        return match.group(1) if match else None


def _rejection_wording(head: str) -> bool:
    # "Error:" opening the result, or "Error: " opening any of its lines.
    return head.startswith("Error:") or "\nError: " in head or any(phrase in head for phrase in _REJECTED_PHRASES)


def _printed_exit_code(text: str) -> int | None:
    # Every pattern needs one of these words; most outputs have neither, and `in` is
    # far cheaper than four regex scans.
    if "exited with code " not in text and "Exit code" not in text:
        return None
    for pattern in _EXIT_PATTERNS:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


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
        extra = ObservationExtra.model_validate(result.extra) if result.extra else _NO_EXTRA
    except ValidationError:
        extra = _NO_EXTRA
    text, exit_code = _unwrap_codex_json(result_text(result))
    if extra.exit_code is not None:
        exit_code = extra.exit_code
    if exit_code is None:
        exit_code = _printed_exit_code(text)
    return CallResult(present=True, text=text, is_error=bool(extra.is_error), exit_code=exit_code, extra=extra)

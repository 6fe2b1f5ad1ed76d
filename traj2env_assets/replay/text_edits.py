"""Exact-text edits (Claude Code Edit/MultiEdit, pi edit) and full-read decoding."""

from __future__ import annotations

import re
from dataclasses import dataclass


class EditError(ValueError):
    """``reason`` is ``old_text_not_found``, ``old_text_ambiguous`` or ``invalid_arguments``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Replacement:
    old: str
    new: str
    replace_all: bool = False


def apply_sequential(content: str, edits: list[Replacement]) -> str:
    """Claude Code semantics: each edit applies to the result of the previous one;
    without ``replace_all`` the first occurrence is replaced."""
    for edit in edits:
        if not edit.old:
            if content:
                raise EditError("old_text_not_found")
            content = edit.new
            continue
        if edit.old not in content:
            raise EditError("old_text_not_found")
        content = content.replace(edit.old, edit.new) if edit.replace_all else content.replace(edit.old, edit.new, 1)
    return content


def apply_against_original(content: str, edits: list[Replacement]) -> str:
    """pi semantics: every ``oldText`` must occur exactly once in the original file,
    the matches must not overlap, and all are replaced at once."""
    spans: list[tuple[int, int, str]] = []
    for edit in edits:
        if not edit.old:
            raise EditError("invalid_arguments")
        first = content.find(edit.old)
        if first < 0:
            raise EditError("old_text_not_found")
        if content.count(edit.old) > 1:  # pi counts non-overlapping occurrences
            raise EditError("old_text_ambiguous")
        spans.append((first, first + len(edit.old), edit.new))
    spans.sort()
    for (_, end, _), (start, _, _) in zip(spans, spans[1:], strict=False):
        if start < end:
            raise EditError("old_text_ambiguous")
    out: list[str] = []
    cursor = 0
    for start, end, new in spans:
        out.append(content[cursor:start])
        out.append(new)
        cursor = end
    out.append(content[cursor:])
    return "".join(out)


_NUMBERED_LINE = re.compile(r"^ *(\d+)\u2192(.*)$")
_SYSTEM_REMINDER = re.compile(r"\n*<system-reminder>.*?</system-reminder>\s*$", re.DOTALL)
_EMPTY_FILE = "the file exists but the contents are empty"
CLAUDE_READ_LINE_LIMIT = 2000


def decode_numbered_read(text: str) -> str | None:
    """File text from a Claude Code Read result (``   N→line`` per line), or None when
    the result is not a complete numbered listing starting at line 1.

    Claude Code numbers the pieces of ``text.split("\n")``, so a file ending with a
    newline shows a last, empty numbered line and joining the lines gives the file
    back exactly (checked against ``toolUseResult.file.content`` in real sessions).
    """
    if _EMPTY_FILE in text and "\u2192" not in text:
        return ""
    body = _SYSTEM_REMINDER.sub("", text)
    lines = body.split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    decoded: list[str] = []
    for expected, line in enumerate(lines, start=1):
        match = _NUMBERED_LINE.match(line)
        if match is None or int(match.group(1)) != expected:
            return None
        decoded.append(match.group(2))
    if not decoded or len(decoded) >= CLAUDE_READ_LINE_LIMIT:
        return None
    return "\n".join(decoded)

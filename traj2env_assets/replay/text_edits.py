"""Exact-text edits (Claude Code Edit/MultiEdit, pi edit) and full-read decoding."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import NamedTuple

from traj2env_assets.replay.content_store import Unchanged


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


class Edited(NamedTuple):
    text: str
    unchanged: Unchanged
    """How much of the original text is kept at each end (for the content store)."""


def apply_sequential(content: str, edits: list[Replacement]) -> Edited:
    """Claude Code semantics: each edit applies to the result of the previous one;
    without ``replace_all`` the first occurrence is replaced."""
    # The original's first and last characters an edit kept: every edit keeps a prefix
    # and a suffix of its input, so the whole run keeps the shortest of each.
    kept_prefix = kept_suffix = len(content)
    for edit in edits:
        if not edit.old:
            if content:
                raise EditError("old_text_not_found")
            content = edit.new
            kept_prefix = kept_suffix = 0
            continue
        first = content.find(edit.old)
        if first < 0:
            raise EditError("old_text_not_found")
        if edit.replace_all:
            # The last occurrence ends no earlier than the last one replaced.
            end = content.rfind(edit.old) + len(edit.old)
            updated = content.replace(edit.old, edit.new)
        else:
            end = first + len(edit.old)
            updated = content[:first] + edit.new + content[end:]
        kept_prefix = min(kept_prefix, first)
        kept_suffix = min(kept_suffix, len(content) - end)
        content = updated
    return Edited(content, Unchanged(kept_prefix, kept_suffix))


def apply_against_original(content: str, edits: list[Replacement]) -> Edited:
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
    for (_, end, _), (start, _, _) in itertools.pairwise(spans):
        if start < end:
            raise EditError("old_text_ambiguous")
    out: list[str] = []
    cursor = 0
    for start, end, new in spans:
        out.append(content[cursor:start])
        out.append(new)
        cursor = end
    out.append(content[cursor:])
    kept = Unchanged(spans[0][0], len(content) - spans[-1][1]) if spans else Unchanged(len(content), len(content))
    return Edited("".join(out), kept)


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

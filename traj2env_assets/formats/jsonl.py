"""Tolerant JSON Lines reading: bad lines are counted, never fatal."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pydantic_core

# pydantic-core's message for a character that cannot start a JSON value (both parsers
# accept the same value starts, NaN and Infinity included).
_NO_VALUE_STARTS_HERE = "expected value at line"
_COUNT_TYPES = (int, float, str)


@dataclass
class LineStats:
    """What the reader skipped, for the conversion record."""

    invalid_lines: int = 0
    non_object_lines: int = 0
    comment_lines: int = 0
    unknown_line_types: dict[str, int] = field(default_factory=dict)

    def count_unknown(self, line_type: object) -> None:
        key = str(line_type)
        self.unknown_line_types[key] = self.unknown_line_types.get(key, 0) + 1

    @property
    def skipped_lines(self) -> int:
        return self.invalid_lines + self.non_object_lines


def line_type(obj: dict[str, Any]) -> str | None:
    """A line's ``type`` when it is a string (a mangled line may carry any JSON there)."""
    value = obj.get("type")
    return value if isinstance(value, str) else None


def text_field(obj: dict[str, Any], key: str) -> str | None:
    """A non-empty string field of a line, else None: a mangled line may carry any JSON
    where a name, id or version belongs, and one such line must not sink the session."""
    value = obj.get(key)
    return value if isinstance(value, str) and value else None


def token_count(value: object) -> int:
    """A token count from a log's usage figures: a mangled figure (text, a list, a float
    that is not finite or integral, a negative number) counts as 0, not as a bad file."""
    if type(value) is int:  # the usual case, first: this runs for every figure of every reply
        return value if value >= 0 else 0
    if not isinstance(value, _COUNT_TYPES) or isinstance(value, bool):
        return 0
    try:
        count = int(value)
    except (ValueError, OverflowError):
        return 0
    return count if count >= 0 else 0


def iter_json_objects(data: bytes, stats: LineStats) -> Iterator[dict[str, Any]]:
    """Yield each JSON object line of ``data`` (a whole ``.jsonl`` file).

    Lines starting with ``//`` (comment headers some published logs carry) are skipped
    and counted; lines that are not JSON, or JSON that is not an object, are counted.
    Lines that are not valid UTF-8 JSON count as invalid, so a binary file is not a crash.
    orjson parses about twice as fast as the stdlib here, which dominates conversion time.
    Lines end at ``\\n`` only (a bare ``\\r`` is JSON whitespace, not a line break);
    BytesIO shares ``data`` instead of copying it, and yields one line at a time. A line is
    parsed as it comes (JSON allows the line break around it): stripping it first copied
    every line, and only a line that fails needs a second look.
    """
    for raw in io.BytesIO(data):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            # Blank and comment lines, and whitespace JSON does not allow (a form feed).
            line = raw.strip()
            if not line:
                continue
            if line.startswith(b"//"):
                stats.comment_lines += 1
                continue
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                stats.invalid_lines += 1
                continue
        if isinstance(value, dict):
            yield value
        else:
            stats.non_object_lines += 1


def loads_like_stdlib(text: str | bytes) -> Any:
    """``json.loads(text)``, three to five times faster.

    Embedded JSON (Codex tool arguments and outputs, detection's head lines) has always
    been decoded with stdlib semantics, and the output must not change. pydantic-core's
    parser returns the stdlib's value for every document it accepts (big integers stay
    ints and NaN/Infinity are accepted, unlike orjson). What it rejects goes to the
    stdlib, which accepts a few of those (lone surrogate escapes, float overflow, a UTF-8
    BOM in bytes, nesting deeper than 200), except text that no JSON value can start at
    the reported character: the stdlib rejects that too. That is the common failure
    (redacted or plain-text Codex arguments) and asking twice doubled its cost.
    Either way a rejected document raises ValueError.
    """
    try:
        return pydantic_core.from_json(text)
    except (ValueError, TypeError) as exc:  # TypeError: a str holding a lone surrogate
        if isinstance(text, str) and str(exc).startswith(_NO_VALUE_STARTS_HERE):
            raise
        return json.loads(text)

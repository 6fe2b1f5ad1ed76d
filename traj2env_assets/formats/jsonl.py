"""Tolerant JSON Lines reading: bad lines are counted, never fatal."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson


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


def iter_json_objects(path: Path, stats: LineStats) -> Iterator[dict[str, Any]]:
    """Yield each JSON object line of ``path``.

    Lines starting with ``//`` (comment headers some published logs carry) are skipped
    and counted; lines that are not JSON, or JSON that is not an object, are counted.
    Lines that are not valid UTF-8 JSON count as invalid, so a binary file is not a crash.
    orjson parses about twice as fast as the stdlib here, which dominates conversion time.
    """
    with path.open("rb") as handle:
        for raw in handle:
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

"""Reads that show part of a file, and files rebuilt from such pieces.

Both agents number the pieces of ``text.split("\n")``: a final newline shows as a
last, empty line, and joining the lines gives the file back exactly.

Claude Code gives a piece directly (``toolUseResult.file``: content, startLine,
numLines, totalLines; the converter keeps them as ``file_*`` extras). pi prints the
requested lines verbatim and ends a result that stops before the end of the file
with a trailer: ``[N more lines in file. Use offset=X to continue]`` (older versions:
``... (N more lines not shown. Use offset=X to continue reading)``) or, when its
50 KB cap cut the output, ``[Showing lines A-B of T (50.0KB limit). Use offset=X to
continue]``; no trailer means the end of the file was reached. A last line that looks
like any other trailer makes the result unusable rather than guessed. (Checked
against the real pi-mono session: every offset read of a file replay knew matched it.)

Codex reads with shell commands whose output is a slice of the file (``sed -n 'A,Bp'``,
``head -n N``, ``tail -n +K``, ``nl -ba``/``cat -n``, see ``shell_effects.shell_read``);
a slice that stopped short of what it asked for reached the end of the file, which
fixes the file's length.

An agent often reads a large file in pieces; once pieces cover every line of the
same version of the file, up to an end some piece reached, the file is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_MORE = re.compile(
    r"\n\n(?:\[(\d+) more lines in file\. Use offset=(\d+) to continue\.?\]"
    r"|\.\.\. \((\d+) more lines not shown\. Use offset=(\d+) to continue reading\))\s*\Z"
)
_SHOWING = re.compile(r"\n\n\[Showing lines (\d+)-(\d+) of (\d+)[^\]\n]*\. Use offset=\d+ to continue\.?\]\s*\Z")
_OTHER_TRAILER = re.compile(r"Use offset=|more lines|exceeds|\blimit\b|truncated", re.IGNORECASE)
_REDACTED = re.compile(r"\[REDACTED_[A-Z_]+[^\]\n]*\]")
"""Markers log redaction puts in place of text (``[REDACTED_INPUT len=.. sha=..]``)."""


@dataclass(frozen=True)
class ReadChunk:
    first: int
    """1-based number of the first line shown."""
    lines: list[str]
    total: int | None
    """Lines in the file (a final newline counts as a last, empty line); None when the
    read did not show where the file ends."""

    @property
    def whole(self) -> bool:
        return self.first == 1 and len(self.lines) == self.total


def redaction_marker(text: str) -> bool:
    """The text is nothing but log redaction's markers (a patch's whole input, say)."""
    stripped = _REDACTED.sub("", text)
    return stripped != text and not stripped.strip()


def redacted(chunk: ReadChunk) -> bool:
    """The log shows part of the piece redacted: it is not the file's content."""
    return any("[REDACTED_" in line and _REDACTED.search(line) for line in chunk.lines)


def parse_pi_read(text: str, offset: int | None) -> ReadChunk | None:
    """The lines a pi read showed, or None when the result is not a plain listing."""
    first = offset if offset and offset > 0 else 1
    showing = _SHOWING.search(text)
    if showing:
        start, end, total = (int(group) for group in showing.groups())
        lines = text[: showing.start()].split("\n")
        return ReadChunk(start, lines, total) if len(lines) == end - start + 1 else None
    more = _MORE.search(text)
    if more:
        remaining, following = (int(g) for g in more.groups() if g is not None)
        lines = text[: more.start()].split("\n")
        return ReadChunk(first, lines, following - 1 + remaining) if following == first + len(lines) else None
    if _OTHER_TRAILER.search(text[-300:].rsplit("\n", 1)[-1]):
        return None  # a trailer of a pi version we do not know: do not guess
    lines = text.split("\n")
    return ReadChunk(first, lines, first - 1 + len(lines))


@dataclass
class PieceAssembler:
    """Lines seen so far of one version of one file."""

    version: int
    total: int | None = None
    lines: dict[int, str] = field(default_factory=dict)

    def add(self, chunk: ReadChunk) -> str | None:
        """Add a piece; the whole file text once every line has been seen."""
        if chunk.total is not None:
            if self.total is not None and self.total != chunk.total:
                self.lines.clear()
            self.total = chunk.total
        for number, line in enumerate(chunk.lines, start=chunk.first):
            if self.lines.get(number, line) != line:
                # Pieces that disagree cannot both be this version: keep the newest.
                self.lines.clear()
                break
        for number, line in enumerate(chunk.lines, start=chunk.first):
            self.lines[number] = line
        if self.total is None:
            return None
        if all(number in self.lines for number in range(1, self.total + 1)):
            return "\n".join(self.lines[number] for number in range(1, self.total + 1))
        return None

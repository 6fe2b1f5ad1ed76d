"""Codex ``apply_patch``: parse the patch text and apply its hunks to file contents.

Grammar (the published apply_patch format)::

    *** Begin Patch
    *** Add File: path          (every line starts with +)
    *** Delete File: path
    *** Update File: path
    *** Move to: new/path       (optional)
    @@ optional context line    (chunk header; may be omitted before the first chunk)
     context / -removed / +added
    *** End of File             (anchors the chunk at the end of the file)
    *** End Patch

Matching follows Codex: a chunk's ``@@`` context line moves the cursor forward; the
chunk's old lines are then searched from the cursor, exactly, then ignoring trailing
whitespace, then ignoring surrounding whitespace, then also reading typographic
punctuation as ASCII. Updated files end with a newline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
EOF_MARK = "*** End of File"


class PatchError(ValueError):
    """``reason`` is ``patch_parse_error`` or ``patch_context_mismatch``."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass
class Chunk:
    context: str | None = None
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    at_eof: bool = False


@dataclass
class AddFile:
    path: str
    content: str


@dataclass
class DeleteFile:
    path: str


@dataclass
class UpdateFile:
    path: str
    move_to: str | None = None
    chunks: list[Chunk] = field(default_factory=list)


PatchOp = AddFile | DeleteFile | UpdateFile


def parse_patch(text: str) -> list[PatchOp]:
    lines = text.strip().split("\n")
    lines = [line.rstrip("\r") for line in lines]
    if not lines or lines[0].strip() != BEGIN:
        raise PatchError("patch_parse_error", "missing '*** Begin Patch'")
    if lines[-1].strip() != END:
        raise PatchError("patch_parse_error", "missing '*** End Patch'")
    body = lines[1:-1]
    ops: list[PatchOp] = []
    index = 0
    while index < len(body):
        # Codex reads a file header with the padding around it trimmed.
        line = body[index].strip()
        if line.startswith(ADD):
            added: list[str] = []
            index += 1
            while index < len(body) and body[index].startswith("+"):
                added.append(body[index][1:])
                index += 1
            ops.append(AddFile(path=line[len(ADD) :].strip(), content="".join(a + "\n" for a in added)))
        elif line.startswith(DELETE):
            ops.append(DeleteFile(path=line[len(DELETE) :].strip()))
            index += 1
        elif line.startswith(UPDATE):
            update = UpdateFile(path=line[len(UPDATE) :].strip())
            index += 1
            if index < len(body) and body[index].startswith(MOVE):
                update.move_to = body[index][len(MOVE) :].strip()
                index += 1
            index = _read_chunks(body, index, update)
            ops.append(update)
        elif not line.strip():
            index += 1
        else:
            raise PatchError("patch_parse_error", f"unexpected line {index + 2}: {line[:80]!r}")
    return ops


def _read_chunks(body: list[str], index: int, update: UpdateFile) -> int:
    chunk: Chunk | None = None
    while index < len(body):
        line = body[index]
        if line.startswith("*** ") and line.strip() != EOF_MARK:
            break
        if line.startswith("@@"):
            chunk = Chunk(context=line[2:].strip() or None)
            update.chunks.append(chunk)
        elif line.strip() == EOF_MARK:
            if chunk is None:
                raise PatchError("patch_parse_error", "'*** End of File' outside a chunk")
            chunk.at_eof = True
        else:
            if chunk is None:
                chunk = Chunk()
                update.chunks.append(chunk)
            marker, rest = (line[:1], line[1:]) if line else (" ", "")
            if marker == " ":
                chunk.old.append(rest)
                chunk.new.append(rest)
            elif marker == "-":
                chunk.old.append(rest)
            elif marker == "+":
                chunk.new.append(rest)
            else:
                raise PatchError("patch_parse_error", f"bad hunk line: {line[:80]!r}")
        index += 1
    if not update.chunks and update.move_to is None:
        raise PatchError("patch_parse_error", f"update of {update.path} has no hunks")
    return index


# Codex's last matching pass: typographic dashes, quotes and spaces count as their ASCII forms.
_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
    }
)


def _plain_punctuation(line: str) -> str:
    return line.strip().translate(_PUNCTUATION)


def _seek(lines: list[str], pattern: list[str], start: int, at_eof: bool) -> int:
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return -1
    last_start = len(lines) - len(pattern)
    starts = [last_start] if at_eof and last_start >= start else []
    starts += list(range(start, last_start + 1))
    for normalise in (lambda s: s, str.rstrip, str.strip, _plain_punctuation):
        wanted = [normalise(p) for p in pattern]
        for candidate in starts:
            if all(normalise(lines[candidate + i]) == wanted[i] for i in range(len(pattern))):
                return candidate
    return -1


def apply_update(content: str, chunks: list[Chunk]) -> str:
    """The new content of a file after ``chunks``; raises ``PatchError`` on a mismatch."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    replacements: list[tuple[int, int, list[str]]] = []
    cursor = 0
    for chunk in chunks:
        if chunk.context is not None:
            found = _seek(lines, [chunk.context], cursor, False)
            if found < 0:
                raise PatchError("patch_context_mismatch", f"context line not found: {chunk.context[:80]!r}")
            cursor = found + 1
        if not chunk.old:
            replacements.append((len(lines), 0, chunk.new))
            continue
        old, new = chunk.old, chunk.new
        found = _seek(lines, old, cursor, chunk.at_eof)
        if found < 0 and old and old[-1] == "":
            old, new = old[:-1], new[:-1] if new and new[-1] == "" else new
            found = _seek(lines, old, cursor, chunk.at_eof)
        if found < 0:
            raise PatchError("patch_context_mismatch", f"lines not found: {old[0][:80]!r}")
        replacements.append((found, len(old), new))
        cursor = found + len(old)
    for start, length, new in sorted(replacements, key=lambda r: r[0], reverse=True):
        lines[start : start + length] = new
    return "".join(line + "\n" for line in lines)

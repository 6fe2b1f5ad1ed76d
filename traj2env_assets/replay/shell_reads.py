"""Chained shell reads: one command printing several files (or pieces of them) in turn.

Codex often reads ``cat a && cat b``, ``sed -n '1,200p' x; sed -n '1,80p' y``,
``cat f g`` or ``ls -la d && sed -n '1,200p' d/f``. The output is the pieces glued
together, so a file is rebuilt from it only when every boundary is provably where
the split puts it (never guessed):

- a piece of a file whose content replay knows is that content, sliced the same way
  (and must be there: otherwise the known content is stale and nothing is split);
- a piece of a file listed by an ``ls -l`` earlier in the same command has that many
  bytes (a ``sed -n '1,Bp'``/``head`` window that printed fewer than ``B`` lines
  within them printed all of it; one whose ``B``-th newline comes earlier stopped
  there); the listing must then end exactly where the first piece starts;
- a ``.json`` file holds one JSON document: when the document's end is followed
  directly by the next piece (no whitespace in between to share), that is the
  boundary (``json.JSONDecoder.raw_decode``);
- the one piece left once every other is placed takes what remains.

A piece whose content is taken from the output must come from a command that
succeeded: the whole command exited 0 and every connector after it is ``&&`` (a
failed command would have stopped the chain and the exit code would not be 0), so
error text is never taken for content.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from traj2env_assets.replay.read_pieces import ReadChunk
from traj2env_assets.replay.shell_effects import TRUNCATED, strip_startup_noise
from traj2env_assets.replay.shell_syntax import SimpleCommand, parse_shell

_SED_RANGE = re.compile(r"(\d+)(?:,(\d+))?p")
_LS_TOTAL = re.compile(rb"total \d+\n")
_LS_ENTRY = re.compile(rb"([-dlbcps])[rwxsStT-]{9}[@+.]? +\d+ +\S+ +\S+ +(\d+) +\S+ +\d+ +[\d:]+ +([^\n]+)\n")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Piece:
    path: str
    """As written in the command (relative to its working directory)."""
    first: int
    last: int | None
    """Last line asked for; None for ``cat`` (the whole file)."""
    proven: bool
    """Its command provably succeeded (see the module docstring)."""

    def render(self, content: str) -> bytes:
        """What this read prints for a file holding ``content``."""
        if self.last is None:
            return content.encode()
        parts = content.split("\n")
        lines = [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
        return "".join(lines[self.first - 1 : self.last]).encode()

    def chunk(self, printed: bytes) -> ReadChunk | None:
        try:
            text = printed.decode()
        except UnicodeDecodeError:
            return None
        if self.last is None:
            lines = text.split("\n")
            return ReadChunk(1, lines, len(lines))
        return _window_chunk(text, self.first, self.last)


def _window_chunk(text: str, first: int, last: int) -> ReadChunk | None:
    """Lines ``first..last`` as printed (see ``shell_effects._slice``)."""
    lines = text.split("\n")
    if not text:
        return None
    if len(lines) == last - first + 2 and lines[-1] == "":
        return ReadChunk(first, lines[:-1], None)
    if len(lines) <= last - first + 1:
        return ReadChunk(first, lines, first - 1 + len(lines))
    return None


@dataclass(frozen=True)
class _Chain:
    listing: str | None
    """Directory of an ``ls -l`` run before the reads."""
    pieces: list[Piece]


def _read_pieces(argv: list[str], proven: bool) -> list[Piece] | None:
    name, args = argv[0], argv[1:]
    if name == "cat" and args and not any(a.startswith("-") for a in args):
        return [Piece(a, 1, None, proven) for a in args]
    if name == "sed" and len(args) == 3 and args[0] == "-n" and (match := _SED_RANGE.fullmatch(args[1])):
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        return [Piece(args[2], first, last, proven)] if 0 < first <= last else None
    if name == "head" and args and not args[-1].startswith("-"):
        flags = args[:-1]
        if len(flags) == 2 and flags[0] == "-n" and flags[1].isdigit() and int(flags[1]) > 0:
            return [Piece(args[-1], 1, int(flags[1]), proven)]
        if len(flags) == 1 and flags[0][:1] == "-" and flags[0][1:].isdigit() and int(flags[0][1:]) > 0:
            return [Piece(args[-1], 1, int(flags[0][1:]), proven)]
    return None


def _listing_dir(argv: list[str]) -> str | None:
    """The directory of ``ls -l[a]`` (sizes in bytes), else None."""
    flags = [a for a in argv[1:] if a.startswith("-")]
    operands = [a for a in argv[1:] if not a.startswith("-")]
    letters = "".join(flag[1:] for flag in flags)
    if argv[0] != "ls" or "l" not in letters or set(letters) - set("laA") or len(operands) > 1:
        return None
    return operands[0] if operands else "."


def parse_chain(command: str) -> _Chain | None:
    """The reads of a chain of plain reads (optionally after one ``ls -l``), else None."""
    commands: list[SimpleCommand] = parse_shell(command).commands
    if not commands or any(c.redirects or c.subshell_depth or not all(w.literal for w in c.words) for c in commands):
        return None
    if any(c.connector not in ("&&", ";", "\n") for c in commands[1:]):
        return None
    listing = _listing_dir(commands[0].argv) if commands[0].argv[:1] == ["ls"] else None
    reads = commands[1:] if listing is not None else commands
    pieces: list[Piece] = []
    for index, simple in enumerate(reads):
        proven = all(later.connector == "&&" for later in reads[index + 1 :])
        found = _read_pieces(simple.argv, proven)
        if found is None:
            return None
        pieces.extend(found)
    if len(pieces) < (1 if listing is not None else 2):
        return None  # a single read is shell_read's
    return _Chain(listing, pieces)


def _listing_sizes(output: bytes, directory: str) -> tuple[int, dict[str, int]]:
    """Where a leading ``ls -l`` listing ends, and the byte size of each regular file."""
    position = 0
    sizes: dict[str, int] = {}
    if total := _LS_TOTAL.match(output):
        position = total.end()
    while entry := _LS_ENTRY.match(output, position):
        kind, size, name = entry.groups()
        if kind == b"-":
            sizes[posixpath.normpath(posixpath.join(directory, name.decode(errors="replace")))] = int(size)
        position = entry.end()
    return position, sizes


def _sized(piece: Piece, output: bytes, end: int, size: int) -> int | None:
    """Start of ``piece`` ending at ``end`` in a file of ``size`` bytes, else None."""
    start = end - size
    if start < 0:
        return None
    if piece.last is None:
        return start
    if piece.first != 1:
        return None
    # A window from line 1 printed the whole file (exactly ``size`` bytes) or stopped at
    # its ``last``-th newline, short of ``size`` bytes: then the last ``size`` bytes
    # hold that newline and all before it, at least ``last`` newlines. Fewer prove the
    # whole file was printed; ``last`` exactly could be either (a file of ``last``
    # newline-ended lines, or a longer file's piece after a line of the piece before).
    return start if output.count(b"\n", start, end) < piece.last else None


def _json_end(output: bytes, start: int, end: int) -> int | None:
    try:
        text = output[start:end].decode()
        value, stop = _DECODER.raw_decode(text)
    except (UnicodeDecodeError, ValueError):
        return None
    boundary = start + len(text[:stop].encode())
    if boundary < end and output[boundary : boundary + 1].isspace():
        return None  # trailing whitespace could be this file's or the next one's
    if isinstance(value, int | float) and not isinstance(value, bool):
        return None  # a number does not end itself: "1" then "0" (or then an empty file) reads as 10
    return boundary


def split_chain(command: str, output: str, known: Callable[[str], str | None]) -> list[tuple[str, ReadChunk]] | None:
    """The pieces of unknown files a chained read printed, when every boundary is
    proven; None otherwise. ``known(path)`` is the content replay knows for a path as
    written in the command."""
    chain = parse_chain(command)
    if chain is None or TRUNCATED.search(output):
        return None
    printed = strip_startup_noise(output).encode()
    pieces = chain.pieces
    left, right = 0, len(printed)
    sizes: dict[str, int] = {}
    if chain.listing is not None:
        left, sizes = _listing_sizes(printed, chain.listing)
        if left == 0:
            return None
    bounds: dict[int, tuple[int, int]] = {}
    low, high = 0, len(pieces)
    # From the end: known contents and listed sizes.
    while high > low:
        piece = pieces[high - 1]
        content = known(piece.path)
        if content is not None:
            expected = piece.render(content)
            if not printed.endswith(expected, left, right):
                return None
            start = right - len(expected)
        elif (size := sizes.get(posixpath.normpath(piece.path))) is not None and piece.proven:
            found = _sized(piece, printed, right, size)
            if found is None or found < left:
                break
            start = found
        else:
            break
        high -= 1
        bounds[high] = (start, right)
        right = start
    # From the start: known contents and JSON documents (not after a listing, whose
    # end is only where its lines stop looking like a listing).
    while low < high and chain.listing is None:
        piece = pieces[low]
        content = known(piece.path)
        if content is not None:
            expected = piece.render(content)
            if not printed.startswith(expected, left) or left + len(expected) > right:
                return None
            stop = left + len(expected)
        elif piece.proven and piece.path.endswith(".json") and piece.first == 1:
            json_stop = _json_end(printed, left, right)
            if json_stop is None:
                break
            stop = json_stop
        else:
            break
        bounds[low] = (left, stop)
        left = stop
        low += 1
    if high - low == 1 and pieces[low].proven and chain.listing is None:
        bounds[low] = (left, right)
        low += 1
    if low != high or (chain.listing is not None and left != right):
        return None
    reads: list[tuple[str, ReadChunk]] = []
    for index, piece in enumerate(pieces):
        if known(piece.path) is not None:
            continue
        start, stop = bounds[index]
        chunk = piece.chunk(printed[start:stop])
        if chunk is None:
            return None
        reads.append((piece.path, chunk))
    return reads

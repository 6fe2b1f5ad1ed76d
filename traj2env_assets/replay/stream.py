"""Large trajectories, one step at a time: bounded memory for the replay stage.

A 500 MB trajectory loaded whole is the file's bytes plus a model of the same size
(well over 1 GB). :func:`read_streamed` walks the document's top-level object with the
stdlib decoder's ``raw_decode`` over a text window read in chunks: the keys other than
``steps`` (small) are kept, each step is validated as an ``atif.Step`` and handed out
on its own, so only one step's text and model are alive at once. No streaming JSON
library is installed here, and ``raw_decode`` is the stdlib's C scanner. A step
followed by the next one (``}, {"step_id"``, as ATIF writers order a step's keys) is
cut there and decoded by pydantic-core's parser, about twice as fast; it reads every
document it accepts as the stdlib does (``allow_inf_nan``, big integers kept exact),
and anything it refuses is left to ``raw_decode``, so errors are the stdlib's.

Replay needs the session's directory and its sub-agents before the first step. The
conversion stage writes ``steps`` last (``stages/convert/conversion.py`` ``trajectory_json``), so
for its files (``steps_last=True``) one pass reads everything; a file that turns out
to have keys after the steps raises :class:`StepsNotLast` at their end. Otherwise (ATIF
puts ``extra`` and ``subagent_trajectories`` after ``steps``) a first pass decodes and
drops the steps to read the rest. The document-level
checks of ``atif.Trajectory`` (step ids in order, references) are not repeated here:
the conversion stage validated the whole document when it wrote it.

:class:`TimelineSpill` keeps the replay's timeline on disk, so command outputs do not
pile up in memory: it is written as ``record.json`` up to the end of its timeline, and
``record.write_record`` finishes it into ``record.json`` (renamed when the record goes to
the spill's directory, as in the replay stage; copied otherwise).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from atif import Step, Trajectory
from pydantic import ValidationError
from pydantic_core import from_json

CHUNK_CHARS = 8 * 1024 * 1024
_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()
_STEP_ID_KEY = '"step_id"'
_BETWEEN_STEPS = re.compile(r"\}[ \t\n\r]*,[ \t\n\r]*\{[ \t\n\r]*\Z")
_LOOKBACK = 64
"""How far before the next step's ``"step_id"`` the end of the current one is looked for."""


class StreamError(ValueError):
    """The file is not a JSON object with a ``steps`` array."""


class StepsNotLast(StreamError):
    """A file read as ``steps_last`` has keys after its steps."""


class _Window:
    """The file's text from ``self.base`` on, read a chunk at a time."""

    def __init__(self, handle: IO[str]) -> None:
        self.handle = handle
        self.text = ""
        self.pos = 0
        self.eof = False

    def _more(self) -> bool:
        if self.eof:
            return False
        chunk = self.handle.read(CHUNK_CHARS)
        if not chunk:
            self.eof = True
            return False
        self.text = self.text[self.pos :] + chunk
        self.pos = 0
        return True

    def skip_space(self) -> str:
        """The next non-whitespace character (consumed), or '' at the end."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.text):
                char = self.text[self.pos]
                self.pos += 1
                return char
            if not self._more():
                return ""

    def peek_space(self) -> str:
        char = self.skip_space()
        if char:
            self.pos -= 1
        return char

    def value(self) -> Any:
        """Decode the next JSON value, reading more text while it is cut off."""
        self.peek_space()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as error:
                # A value cut at the window's end fails with a position at (or just
                # before) the end; anything else is a real error once nothing is left.
                if self._more():
                    continue
                raise StreamError(f"invalid JSON: {error}") from error
            # A number at the very end of the window may continue in the next chunk.
            if end == len(self.text) and isinstance(value, (int, float)) and self._more():
                continue
            self.pos = end
            return value

    def step(self) -> Any:
        """Decode the next value of a steps array: the text up to the next step when
        it can be seen, else as :meth:`value` does."""
        self.peek_space()
        end = self._end_before_next_step()
        if end is None and len(self.text) - self.pos < CHUNK_CHARS and self._more():
            # The next step may begin past the window's end: read on once, rather than
            # let value() first fail on the cut step (a costly JSONDecodeError).
            end = self._end_before_next_step()
        if end is not None:
            try:
                step = from_json(self.text[self.pos : end], allow_inf_nan=True)
            except ValueError:
                pass  # not exactly one JSON value there, or one only the stdlib reads
            else:
                self.pos = end
                return step
        return self.value()

    def _end_before_next_step(self) -> int | None:
        """Where the object at ``pos`` seems to end: just before ``, {"step_id"`` (the
        object's own ``"step_id"`` comes first). Only a guess: a nested ``"step_id"``
        can look the same, which the decoder then refuses."""
        text, start = self.text, self.pos
        if not text.startswith("{", start):
            return None
        found = start
        for _ in range(2):
            found = text.find(_STEP_ID_KEY, found + 1)
            if found < 0:
                return None
            between = _BETWEEN_STEPS.search(text, max(start, found - _LOOKBACK), found)
            if between is not None:
                return between.start() + 1
        return None


def _expect(window: _Window, char: str) -> None:
    found = window.skip_space()
    if found != char:
        raise StreamError(f"expected {char!r}, found {found!r}")


def _walk(path: Path, keep_steps: bool, stop_at_steps: bool = False) -> Iterator[tuple[str, Any]]:
    """(key, value) for each top-level key; for ``steps``, (``"step"``, step dict) per
    step, then (``"steps_end"``, None) and, when ``stop_at_steps``, nothing more but
    (``"after_steps"``, True) if other keys follow."""
    with path.open(encoding="utf-8") as handle:
        window = _Window(handle)
        _expect(window, "{")
        if window.peek_space() == "}":
            return
        while True:
            key = window.value()
            if not isinstance(key, str):
                raise StreamError("a key that is not a string")
            _expect(window, ":")
            if key == "steps" and stop_at_steps and not keep_steps:
                yield "steps_end", None
                return
            if key == "steps":
                _expect(window, "[")
                if window.peek_space() == "]":
                    window.skip_space()
                else:
                    while True:
                        step = window.step()
                        if keep_steps:
                            yield "step", step
                        separator = window.skip_space()
                        if separator == "]":
                            break
                        if separator != ",":
                            raise StreamError(f"expected ',' or ']' in steps, found {separator!r}")
                yield "steps_end", None
                if stop_at_steps:
                    if window.peek_space() != "}":
                        yield "after_steps", True
                    return
            else:
                yield key, window.value()
            separator = window.skip_space()
            if separator == "}":
                return
            if separator != ",":
                raise StreamError(f"expected ',' or '}}', found {separator!r}")


@dataclass
class StreamedTrajectory:
    """The trajectory without its steps (``steps=[]``), and the file to stream them from."""

    path: Path
    header: Trajectory
    steps_last: bool

    def steps(self) -> Iterator[Step]:
        for key, value in _walk(self.path, keep_steps=True, stop_at_steps=True):
            if key == "step":
                yield Step.model_validate(value)
            elif key == "after_steps" and self.steps_last:
                raise StepsNotLast("keys follow the steps; read it with steps_last=False")


def read_streamed(path: Path, steps_last: bool = False) -> StreamedTrajectory:
    """Read everything but the steps; raises StreamError or pydantic's ValidationError.

    ``steps_last``: the file was written with ``steps`` last (one pass)."""
    fields: dict[str, Any] = {}
    saw_steps = False
    for key, value in _walk(path, keep_steps=False, stop_at_steps=steps_last):
        if key == "steps_end":
            saw_steps = True
        else:
            fields[key] = value
    if not saw_steps:
        raise StreamError("no 'steps' array")
    # A placeholder step satisfies the model's "at least one step"; it is never replayed.
    placeholder = {"step_id": 1, "source": "user", "message": ""}
    try:
        header = Trajectory.model_validate({**fields, "steps": [placeholder]})
    except ValidationError as error:
        if steps_last:  # required keys may simply come after the steps
            raise StepsNotLast(f"the keys before the steps are not a trajectory: {error}") from error
        raise
    return StreamedTrajectory(path=path, header=header.model_copy(update={"steps": []}), steps_last=steps_last)


SPILL_BUFFER_BYTES = 1 << 20
"""Events are a few KB each: a large buffer turns them into few, large writes."""
TIMELINE_MARKER = b'"timeline":['


def split_at_timeline(record_json: bytes) -> tuple[bytes, bytes]:
    """``record.json`` around its timeline's events: everything up to and including
    ``"timeline":[``, and the rest. The marker can only occur once, structurally:
    inside a JSON string every quote is escaped."""
    head, marker, tail = record_json.partition(TIMELINE_MARKER)
    if not marker:
        raise ValueError("record.json has no timeline")
    return head + marker, tail


@dataclass
class TimelineSpill:
    """Timeline events written out as the replay goes, joined by commas after ``head``
    (``record.json`` up to its timeline's events): once the record's tail is appended,
    the file is ``record.json`` itself, so a large timeline is never copied."""

    directory: Path
    head: bytes = b""
    count: int = 0
    _file: IO[bytes] | None = field(default=None, repr=False)
    path: Path | None = None

    def write(self, event_json: bytes) -> None:
        if self._file is None:
            descriptor, name = tempfile.mkstemp(prefix=".timeline-", suffix=".json", dir=self.directory)
            self._file = os.fdopen(descriptor, "wb", buffering=SPILL_BUFFER_BYTES)
            self.path = Path(name)
            self._file.write(self.head)
        else:
            self._file.write(b",")
        self._file.write(event_json)
        self.count += 1

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def copy_events_to(self, target: IO[bytes]) -> None:
        """Write the spilled events (comma-joined, without ``head``) to ``target``."""
        self.close()
        if self.path is None:
            return
        with self.path.open("rb") as handle:
            handle.seek(len(self.head))
            shutil.copyfileobj(handle, target, SPILL_BUFFER_BYTES)

    def finish_as(self, path: Path, tail: bytes) -> None:
        """Append ``tail`` and rename the spill to ``path`` (in the spill's directory)."""
        assert self.path is not None
        self.close()
        with self.path.open("ab") as handle:
            handle.write(tail)
        os.replace(self.path, path)

    def remove(self) -> None:
        self.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)

"""Stage 1: one source log -> one validated ATIF-v1.7 trajectory, or a reason why not."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import atif
from pydantic import BaseModel, ValidationError

from traj2env_assets.formats.atif_json import convert_atif
from traj2env_assets.formats.claude_code import convert_claude_code
from traj2env_assets.formats.codex import convert_codex
from traj2env_assets.formats.detect import HEAD_BYTES, DetectedFormat, UndetectableFormat, detect_head
from traj2env_assets.formats.pi import convert_pi

# Each converter gets the path (sub-agent sidecars, file stem) and the file's bytes.
CONVERTERS: dict[DetectedFormat, Callable[[Path, bytes], atif.Trajectory]] = {
    "atif": convert_atif,
    "claude-code": convert_claude_code,
    "codex": convert_codex,
    "pi": convert_pi,
}
MAX_INPUT_BYTES = 512 * 1024 * 1024

# Reasons a source is skipped (exact strings in report.json).
SkipReason = Literal[
    "not_a_regular_file",
    "unreadable",
    "too_large",
    "empty_file",
    "binary_file",
    "unrecognised_format",
    "invalid_trajectory",
    "no_steps",
]


class ConversionRecord(BaseModel):
    """What the conversion stage did with one source file."""

    source_path: str
    format: DetectedFormat | None = None
    model_name: str | None = None
    status: Literal["converted", "skipped"]
    reason: SkipReason | None = None
    detail: str | None = None
    steps: int = 0
    tool_calls: int = 0
    subagents: int = 0
    skipped_lines: int = 0
    unknown_line_types: int = 0
    duplicate_tool_calls: int = 0
    bytes: int = 0
    seconds: float = 0.0


class ConversionResult(BaseModel):
    record: ConversionRecord
    trajectory: atif.Trajectory | None = None


def _skipped(
    path: Path, reason: SkipReason, detail: str, fmt: DetectedFormat | None = None, size: int = 0
) -> ConversionResult:
    return ConversionResult(
        record=ConversionRecord(
            source_path=str(path), format=fmt, status="skipped", reason=reason, detail=detail, bytes=size
        )
    )


_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_resume = False


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector while one document is converted.

    A conversion allocates tens of thousands of objects that all stay alive until the
    document is validated, so the collector keeps scanning them (and every object of a
    process that imported Dagster) and finds nothing: that was up to half of the time on
    large logs. Reference counting still frees everything a conversion drops, and the
    first collection after the pause takes any cycles it left. Counted under a lock so
    that concurrent conversions in threads re-enable the collector only when the last
    ends, and only if it was enabled before the first began.
    """
    global _gc_pausers, _gc_resume
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_resume:
                gc.enable()


def convert_source(path: Path, forced_format: DetectedFormat | Literal["auto"] = "auto") -> ConversionResult:
    """Convert ``path``; never raises for bad input, the record says what went wrong."""
    with _gc_paused():
        return _convert_source(path, forced_format)


def _convert_source(path: Path, forced_format: DetectedFormat | Literal["auto"]) -> ConversionResult:
    started = time.perf_counter()
    try:
        if not path.is_file():
            return _skipped(path, "not_a_regular_file", "not a regular file")
        size = path.stat().st_size
    except OSError as exc:
        return _skipped(path, "unreadable", exc.strerror or str(exc))
    if size > MAX_INPUT_BYTES:
        return _skipped(path, "too_large", f"{size} bytes exceeds {MAX_INPUT_BYTES}", size=size)
    fmt: DetectedFormat | None = None if forced_format == "auto" else forced_format
    try:
        # One open: detection reads the head, and a file whose head matches no format is
        # read no further. Most logs fit in the head, which is then the whole file; a
        # longer one is read again from the start, which is cheaper than joining the head
        # and the rest (a copy of the whole file).
        with path.open("rb") as handle:
            data = handle.read(HEAD_BYTES)
            fmt = fmt or detect_head(data)
            if len(data) == HEAD_BYTES:
                handle.seek(0)
                data = handle.read()
    except UndetectableFormat as exc:
        return _skipped(path, exc.reason, str(exc), size=size)
    except OSError as exc:
        return _skipped(path, "unreadable", exc.strerror or str(exc), fmt, size)
    try:
        trajectory = CONVERTERS[fmt](path, data)
    except ValidationError as exc:
        return _skipped(path, "invalid_trajectory", _first_errors(exc), fmt, size)
    except OSError as exc:
        return _skipped(path, "unreadable", exc.strerror or str(exc), fmt, size)
    except ValueError as exc:
        reason: SkipReason = "no_steps" if str(exc).startswith("no ") else "invalid_trajectory"
        return _skipped(path, reason, str(exc), fmt, size)
    extra = trajectory.extra or {}
    record = ConversionRecord(
        source_path=str(path),
        format=fmt,
        model_name=trajectory.agent.model_name,
        status="converted",
        steps=len(trajectory.steps),
        tool_calls=sum(len(step.tool_calls or []) for step in trajectory.steps),
        subagents=len(trajectory.subagent_trajectories or []),
        skipped_lines=int(extra.get("skipped_lines") or 0),
        unknown_line_types=int(extra.get("unknown_line_types") or 0),
        duplicate_tool_calls=int(extra.get("duplicate_tool_calls") or 0),
        bytes=size,
        seconds=round(time.perf_counter() - started, 4),
    )
    extra = {**extra, "source_path": str(path)}
    return ConversionResult(record=record, trajectory=trajectory.model_copy(update={"extra": extra}))


def _first_errors(exc: ValidationError, limit: int = 3) -> str:
    errors = exc.errors()[:limit]
    return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors)

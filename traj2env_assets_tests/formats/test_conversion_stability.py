"""Conversion output is pinned: the same input must give the same bytes.

Speed work on the converters must not change what they emit. Every real shape
(``real_shapes.py``: logs of our own making) and bundled example is converted, and so are damaged copies of the ``.jsonl`` ones that
exercise the line reader (junk and unknown lines, CRLF endings, padded lines, a
truncated tail) and the examples under each forced format. The SHA-256 of each written
trajectory (as ``conversion.py`` writes it) and record is compared with
``conversion_digests.json``. A deliberate output change bumps ``CONVERTER_VERSION`` in
``stages/convert/conversion.py`` and regenerates the digests:

    UPDATE_CONVERSION_DIGESTS=1 .venv/bin/pytest traj2env_assets_tests/formats/test_conversion_stability.py
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.formats.jsonl import loads_like_stdlib
from traj2env_assets.stages.convert.conversion import trajectory_json
from traj2env_assets_tests.formats import real_shapes

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "trajectories"
DIGESTS = Path(__file__).with_name("conversion_digests.json")
FORCED_FORMATS = ("atif", "claude-code", "codex", "pi")
# Lines a log can carry that are not a usable entry: invalid JSON, non-objects, comments,
# unknown or irrelevant types, a truncated line.
JUNK_LINES = [
    b"not json",
    b"[1, 2]",
    b"// comment",
    b'{"type": "weird_type", "x": 1}',
    b'{"type": 5}',
    b"{}",
    b'{"type": "progress", "broken"',
    b'{"type": "event_msg", "payload": {"type": "agent_message", "message": "x"}}',
    b'{"type": "event_msg", "payload": 3}',
    b'{"type": "response_item", "payload": {"type": "mystery"}}',
    b'{"type": "file-history-snapshot", "uuid": "x"}',
    b"\xff\xfe",
]


def _with_junk(data: bytes) -> bytes:
    lines = data.split(b"\n")
    out: list[bytes] = []
    for index, line in enumerate(lines):
        if index % 5 == 2:
            out.append(JUNK_LINES[index % len(JUNK_LINES)])
        out.append(line)
    return b"\n".join(out)


MUTATIONS: dict[str, Callable[[bytes], bytes]] = {
    "junk": _with_junk,
    "crlf": lambda data: data.replace(b"\n", b"\r\n"),
    "padded": lambda data: b"\n".join(b" \t" + line + b" \x0c" for line in data.split(b"\n")),
    "truncated": lambda data: data[: len(data) * 2 // 3],
}


def _sources(scratch: Path) -> dict[str, Path]:
    """Each input by its digest name: the shapes as ``shapes/<file>``, the examples by repository path."""
    shapes = {f"shapes/{path.name}": path for path in real_shapes.write_all(scratch / "shapes")}
    examples = {path.relative_to(REPO).as_posix(): path for path in EXAMPLES.rglob("*") if path.is_file()}
    return dict(sorted({**shapes, **examples}.items()))


def _digest(path: Path, case: str, forced: str) -> str:
    """SHA-256 of the record and the trajectory, with the source path made portable."""
    result = convert_source(path, forced)  # type: ignore[arg-type]
    record = result.record.model_dump(exclude={"seconds"})
    record["source_path"] = case
    text = json.dumps(record, sort_keys=True)
    if result.trajectory is not None:
        extra = {**(result.trajectory.extra or {}), "source_path": case}
        trajectory = result.trajectory.model_copy(update={"extra": extra})
        text += "\n" + trajectory_json(trajectory)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def current_digests(scratch: Path) -> dict[str, str]:
    digests: dict[str, str] = {}
    for name, path in _sources(scratch).items():
        digests[name] = _digest(path, name, "auto")
        if path.is_relative_to(EXAMPLES):
            for forced in FORCED_FORMATS:
                digests[f"{name} as {forced}"] = _digest(path, name, forced)
        if path.suffix != ".jsonl":
            continue
        for mutation, mutate in MUTATIONS.items():
            copy = scratch / f"{path.stem}.{mutation}.jsonl"
            copy.write_bytes(mutate(path.read_bytes()))
            case = f"{name} {mutation}"
            digests[case] = _digest(copy, case, "auto")
    return digests


def test_conversion_output_is_unchanged(tmp_path: Path) -> None:
    digests = current_digests(tmp_path)
    if os.environ.get("UPDATE_CONVERSION_DIGESTS"):
        DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip("digests rewritten")
    expected = json.loads(DIGESTS.read_text(encoding="utf-8"))
    changed = sorted(case for case in expected.keys() | digests.keys() if expected.get(case) != digests.get(case))
    assert not changed, f"conversion output changed for {len(changed)} inputs (bump CONVERTER_VERSION): {changed[:10]}"


def _stdlib_outcome(decode: Callable[[str | bytes], object], text: str | bytes) -> tuple[str, str]:
    try:
        return "value", repr(decode(text))
    except ValueError:
        return "error", ""


TRICKY_JSON: list[str | bytes] = [
    '{"cmd": ["bash", "-lc", "ls"], "workdir": "/tmp"}',
    "[REDACTED_ARGUMENTS len=153 sha=23291271]",
    "plain text",
    "",
    "18446744073709551616",
    "-9223372036854775809",
    "1e400",
    "NaN",
    "-Infinity",
    '"\\ud800"',
    '"\\ud83d\\ude00"',
    "\ufeff{}",
    b"\xef\xbb\xbf{}",
    "[" * 300 + "]" * 300,
    '{"a": 1, "a": 2}',
    "[1,]",
    "1" * 5000,
]


def test_embedded_json_decodes_exactly_as_the_stdlib() -> None:
    """``loads_like_stdlib`` may be faster than ``json.loads`` but never different."""
    rng = random.Random(5)
    alphabet = [*'{}[]",:.-+eE019 \t\nNaIfu\\', "null", "true", "NaN", "\\ud800", "\ufeff"]
    cases: list[str | bytes] = list(TRICKY_JSON)
    for _ in range(3000):
        text = list(str(rng.choice(TRICKY_JSON[:12])))
        for _ in range(rng.randint(1, 3)):
            text.insert(rng.randint(0, len(text)), rng.choice(alphabet))
        cases.append("".join(text))
    for case in cases:
        assert _stdlib_outcome(loads_like_stdlib, case) == _stdlib_outcome(json.loads, case), case

"""Steps cut at the next step and decoded by pydantic-core read exactly as the stdlib reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import from_json

from traj2env_assets.replay import stream
from traj2env_assets.replay.stream import _walk

# JSON text pieces that parsers disagree on: numbers past 64 bits or a double's range,
# NaN/Infinity, lone surrogates, escapes, whitespace JSON does not allow.
PIECES = [
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    " ",
    "\n",
    "\t",
    "\x0c",
    "\u00a0",
    '"a"',
    '"step_id"',
    '"\\ud800"',
    '"\\udc00"',
    '"\\ud83d\\ude00"',
    '"\\u0000"',
    '"\\x"',
    '"\\/"',
    "0",
    "-0",
    "01",
    "1.",
    ".5",
    "1e400",
    "-1e400",
    "1E5",
    "2e-324",
    "123456789012345678901234567890",
    "18446744073709551616",
    "-9223372036854775809",
    "0.30000000000000004",
    "NaN",
    "Infinity",
    "-Infinity",
    "true",
    "false",
    "null",
    "True",
    "'a'",
    "//",
    "+1",
    "0x1",
]
NEAR_JSON = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)


def _same(a: object, b: object) -> bool:
    # repr tells 1 from 1.0 and -0.0 from 0.0; NaN is never equal to itself.
    return repr(a) == repr(b) and type(a) is type(b)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(NEAR_JSON, JSON_VALUES.map(json.dumps), JSON_VALUES.map(lambda v: json.dumps(v, indent=1))))
def test_what_pydantic_core_reads_the_stdlib_reads_alike(text: str) -> None:
    try:
        fast = from_json(text, allow_inf_nan=True)
    except ValueError:
        return  # the stream then leaves it to the stdlib
    assert _same(fast, json.loads(text))


STEPS = [
    {"step_id": 1, "source": "user", "message": "go"},
    # A nested "step_id" after `}, {` looks like the next step: the guess must be refused.
    {"step_id": 2, "source": "agent", "message": "", "extra": {"list": [{"a": 1}, {"step_id": 9}]}},
    {"source": "agent", "step_id": 3, "message": "keys in another order"},
    {"step_id": 4, "source": "agent", "message": "", "extra": {"big": 123456789012345678901234567890, "x": 1e300}},
    {"step_id": 5, "source": "agent", "message": 'a } , { "step_id" inside a string'},
    {"step_id": 6, "source": "agent", "message": "last"},
]


@pytest.mark.parametrize("indent", [None, 1, 4])
@pytest.mark.parametrize("chunk", [16, 4096])
def test_streamed_steps_are_the_stdlib_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indent: int | None, chunk: int
) -> None:
    path = tmp_path / "t.json"
    text = json.dumps({"session_id": "s", "steps": STEPS}, indent=indent)
    # Values only the stdlib reads: NaN and a lone surrogate.
    text = text.replace('"x": 1e+300', '"x": NaN').replace('"go"', '"\\ud800go"')
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(stream, "CHUNK_CHARS", chunk)
    streamed = [value for key, value in _walk(path, keep_steps=True) if key == "step"]
    assert repr(streamed) == repr(json.loads(text)["steps"])

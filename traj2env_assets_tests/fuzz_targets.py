"""Fuzz targets for the converters and the replay's shell reader (hypothesis).

Each target is a hypothesis test function: calling it runs ``max_examples`` examples and
raises on the first crash with the shrunk input. ``benchmarks/fuzz.py`` calls them in a
loop for a CPU-time budget; ``test_fuzz.py`` runs a short round of each in CI.

The converter inputs are the bundled sample sessions of every format with structure-aware
mutations (a value anywhere in a line's JSON replaced by any JSON value, keys dropped,
lines dropped, duplicated, swapped or cut mid-way, raw bytes inserted): random bytes
alone would stop at format detection. Whatever converts is then replayed. The property:
nothing raises; a file either converts or is skipped with a reason.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.replay import replay_trajectory
from traj2env_assets.replay.shell_effects import analyse_shell
from traj2env_assets.replay.shell_syntax import expand_heredoc, parse_shell

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "trajectories"
SEEDS = {
    "claude-code": EXAMPLES / "claude-code" / "python-pytest-fix.jsonl",
    "codex": EXAMPLES / "codex" / "python-pytest-fix.jsonl",
    "pi": EXAMPLES / "pi" / "python-pytest-fix.jsonl",
    "atif": EXAMPLES / "atif" / "python-pytest-fix.json",
}
_SCRATCH = Path(tempfile.mkdtemp(prefix="traj2env-fuzz-"))

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=10,
)
SHELL_PIECES = st.sampled_from(
    [
        *"ab ./-'\"$`\\|&;()<>{}*?~#\n\t=[]!",
        "<<EOF",
        "<<-EOF",
        "<<'E'",
        '<<"E"',
        "EOF",
        "E",
        "cat",
        "rm -rf",
        "mv",
        "cp",
        "sed -i",
        "sed -i.bak",
        "cd",
        "echo",
        "printf",
        "tee -a",
        "git checkout",
        "git stash",
        "npm run",
        "python -c",
        "bash -c",
        "sh -c",
        "env",
        "sudo",
        "timeout 5",
        "xargs",
        "touch",
        "mkdir -p",
        "2>&1",
        ">>",
        "&>",
        "$(",
        "${x}",
        "<<<",
        "perl -pi -e",
        "patch -p1",
        "apply_patch",
        "*** Begin Patch",
        "*** Update File: a.py",
        "@@",
        "+x",
        "-y",
    ]
)


class _UnknownDirs:
    """A session context that knows nothing: every directory and package.json unknown."""

    def resolve_dir(self, raw: str, cwd: str | None) -> object:
        return None

    def npm_scripts(self, cwd: str) -> None:
        return None


def _mutate_value(value: Any, path: list[int], replacement: Any, drop: bool) -> Any:
    """``value`` with the node chosen by ``path`` (indices into each level's children)
    replaced by ``replacement``, or dropped from its parent when ``drop``."""
    if not path or not isinstance(value, dict | list) or not value:
        return replacement
    keys = list(value) if isinstance(value, dict) else list(range(len(value)))
    key = keys[path[0] % len(keys)]
    copy = dict(value) if isinstance(value, dict) else list(value)
    if drop and len(path) == 1:
        del copy[key]
        return copy
    copy[key] = _mutate_value(value[key], path[1:], replacement, drop)
    return copy


_MUTATIONS = st.lists(
    st.tuples(
        st.sampled_from(["replace", "drop_key", "drop_line", "duplicate_line", "swap_lines", "cut_line", "bytes"]),
        st.integers(min_value=0, max_value=10_000),
        st.lists(st.integers(min_value=0, max_value=50), min_size=1, max_size=6),
        JSON_VALUES,
        st.binary(max_size=16),
    ),
    min_size=1,
    max_size=6,
)


def _mutated_lines(lines: list[bytes], mutations: list[tuple[str, int, list[int], Any, bytes]]) -> list[bytes]:
    for kind, where, path, value, raw in mutations:
        if not lines:
            lines = [raw]
            continue
        index = where % len(lines)
        if kind in ("replace", "drop_key"):
            try:
                document = json.loads(lines[index])
            except ValueError:
                continue
            mutated = _mutate_value(document, path, value, drop=kind == "drop_key")
            lines[index] = json.dumps(mutated).encode()
        elif kind == "drop_line":
            del lines[index]
        elif kind == "duplicate_line":
            lines.insert(index, lines[index])
        elif kind == "swap_lines":
            other = path[0] % len(lines)
            lines[index], lines[other] = lines[other], lines[index]
        elif kind == "cut_line":
            lines[index] = lines[index][: path[0] * len(lines[index]) // 51]
        else:
            lines[index] = lines[index][: path[0]] + raw + lines[index][path[0] :]
    return lines


def _seed_lines(fmt: str) -> list[bytes]:
    data = SEEDS[fmt].read_bytes()
    if fmt == "atif":
        # One JSON document: mutate its steps as the "lines".
        document = json.loads(data)
        return [json.dumps(document).encode()]
    return data.splitlines()


def _convert_and_replay(name: str, data: bytes) -> None:
    path = _SCRATCH / name
    path.write_bytes(data)
    result = convert_source(path)
    record = result.record
    assert record.status in ("converted", "skipped")
    if record.status == "skipped":
        assert record.reason, "a skipped file has a reason"
        return
    assert result.trajectory is not None
    replayed = replay_trajectory(result.trajectory).record
    assert replayed.fidelity.events == len(replayed.timeline)


class FuzzTarget(NamedTuple):
    """A property and the strategies of its arguments; :func:`run_target` wraps it in a
    fresh hypothesis test each round (a test takes its settings only once)."""

    function: Callable[..., None]
    strategies: dict[str, st.SearchStrategy[Any]]


def _converter_target(fmt: str) -> FuzzTarget:
    seed = _seed_lines(fmt)
    suffix = SEEDS[fmt].suffix

    def target(mutations: list[tuple[str, int, list[int], Any, bytes]]) -> None:
        _convert_and_replay(f"{fmt}{suffix}", b"\n".join(_mutated_lines(list(seed), mutations)) + b"\n")

    target.__name__ = f"fuzz_convert_{fmt.replace('-', '_')}"
    return FuzzTarget(target, {"mutations": _MUTATIONS})


def fuzz_convert_raw_bytes(data: bytes) -> None:
    _convert_and_replay("raw.jsonl", data)


def fuzz_shell_reader(command: str, cwd: str | None) -> None:
    parsed = parse_shell(command)
    for simple in parsed.commands:
        for redirect in simple.redirects:
            if redirect.heredoc is not None:
                expand_heredoc(redirect.heredoc)
    analysis = analyse_shell(command, cwd, _UnknownDirs())
    assert analysis.effects in ("none", "tracked", "opaque")


def fuzz_shell_reader_any_text(command: str) -> None:
    assert analyse_shell(command, "/repo", _UnknownDirs()).effects in ("none", "tracked", "opaque")


TARGETS: dict[str, FuzzTarget] = {
    **{f"convert_{fmt}": _converter_target(fmt) for fmt in SEEDS},
    "convert_raw_bytes": FuzzTarget(fuzz_convert_raw_bytes, {"data": st.binary(max_size=2000)}),
    "shell_reader": FuzzTarget(
        fuzz_shell_reader,
        {"command": st.lists(SHELL_PIECES, max_size=60).map("".join), "cwd": st.sampled_from([None, "/repo", "/"])},
    ),
    "shell_reader_any_text": FuzzTarget(fuzz_shell_reader_any_text, {"command": st.text(max_size=300)}),
}


def run_target(target: FuzzTarget, examples: int, seed: int | None = None) -> None:
    """Run ``examples`` examples of ``target``; raises on a crash (hypothesis shrinks it first)."""
    configured = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed is None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )(given(**target.strategies)(target.function))
    if seed is not None:
        configured = fixed_seed(seed)(configured)
    configured()

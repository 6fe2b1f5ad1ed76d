"""A short round of every fuzz target (``benchmarks/fuzz.py`` runs them for minutes), and the
crashes it found, kept as plain regression tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.replay.paths import normalise_dir
from traj2env_assets.replay.shell_syntax import parse_shell
from traj2env_assets_tests.fuzz_targets import TARGETS, run_target


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_fuzz_target_short_round(name: str) -> None:
    run_target(TARGETS[name], examples=150)


def _claude_line(message: dict[str, object], **fields: object) -> dict[str, object]:
    return {
        "type": "assistant",
        "sessionId": "s",
        "uuid": "u1",
        "cwd": "/repo",
        "timestamp": "2026-03-01T10:00:00Z",
        "message": message,
        **fields,
    }


def _pi_lines(entry: dict[str, object]) -> list[dict[str, object]]:
    return [
        {"type": "session", "id": "p", "cwd": "/repo"},
        entry,
        {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
    ]


# The crashes the fuzzer found, each a line of a session that is otherwise fine.
FOUND: dict[str, list[dict[str, object]]] = {
    "claude line type is a list": [
        {"type": ["user"], "sessionId": "s", "uuid": "u0"},
        _claude_line({"id": "m", "role": "assistant", "content": "ok"}),
    ],
    "claude usage figure is a list": [
        _claude_line(
            {"id": "m", "role": "assistant", "content": "ok", "usage": {"input_tokens": [], "output_tokens": "x"}}
        )
    ],
    "claude text block is a list": [
        _claude_line(
            {
                "id": "m",
                "role": "assistant",
                "content": [{"type": "text", "text": ["a"]}, {"type": "text", "text": "ok"}],
            }
        )
    ],
    "pi entry type is a list": _pi_lines({"type": ["model_change"], "modelId": "m"}),
    "pi model id is a list": _pi_lines({"type": "model_change", "modelId": ["m"]}),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_mangled_line_found_by_the_fuzzer_does_not_stop_conversion(tmp_path: Path, name: str) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in FOUND[name]) + "\n")
    assert convert_source(path).record.status == "converted"


def test_a_non_ascii_digit_before_a_redirection_is_a_word_not_a_descriptor() -> None:
    [command] = parse_shell("echo ²> out").commands
    assert command.argv == ["echo", "²"] and command.redirects[0].fd is None


def test_a_working_directory_that_is_not_text_is_unknown() -> None:
    assert normalise_dir(7) is None  # type: ignore[arg-type]

"""Refusal and exit-code reading: the phrase checks agree with the regexes they replaced."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from traj2env_assets.replay.tool_results import _EXIT_PATTERNS, CallResult, _printed_exit_code

_REJECTED = re.compile(
    r"<tool_use_error>|The user doesn't want to proceed|haven't granted it yet|File has not been read yet|"
    r"apply_patch verification failed|Failed to apply patch|user rejected|Permission denied|"
    r"^Error: |\AError:|was rejected|Request interrupted by user",
    re.MULTILINE,
)
_NOT_RUN = re.compile(
    r"<tool_use_error>|The user doesn't want to proceed|haven't granted it yet|user rejected|was rejected"
)
_SESSION_ID = re.compile(r"Process running with session ID (\d+)")

FRAGMENTS = [
    "<tool_use_error>",
    "The user doesn't want to proceed",
    "haven't granted it yet",
    "File has not been read yet",
    "apply_patch verification failed",
    "Failed to apply patch",
    "user rejected",
    "Permission denied",
    "was rejected",
    "Request interrupted by user",
    "Error: ",
    "Error:",
    "Error",
    "\n",
    "\r\n",
    " ",
    "x",
    "ok",
    "rejected",
    "user ",
    "Process running with session ID ",
    "Process exited with code ",
    "Command exited with code ",
    "Exit code: ",
    "Exit code ",
    "Exit code:",
    "-",
    "7",
    "42",
    "\t",
]
TEXTS = st.lists(st.sampled_from(FRAGMENTS), max_size=6).map("".join)


def _regex_exit_code(text: str) -> int | None:
    for pattern in _EXIT_PATTERNS:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


@settings(max_examples=1000, deadline=None)
@example("a\nError:x")
@example("a\nError: x")
@example("Error:x")
@example("a\r\nError: x")
@example("Exit code: 3")
@example("a\nExit code 4\nb")
@given(st.one_of(TEXTS, st.builds(lambda pad, text: "y" * pad + text, st.integers(1990, 2010), TEXTS)))
def test_phrase_checks_agree_with_the_regexes(text: str) -> None:
    result = CallResult(present=True, text=text)
    assert result.rejected == bool(_REJECTED.search(text[:2000]))
    assert result.not_run == bool(_NOT_RUN.search(text[:2000]))
    session = _SESSION_ID.search(text)
    assert result.running_session == (session.group(1) if session else None)
    assert _printed_exit_code(text) == _regex_exit_code(text)

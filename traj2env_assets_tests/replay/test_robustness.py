"""Bad input never crashes replay: arbitrary shell text, patch text and tool arguments."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from traj2env_assets.replay import replay_trajectory
from traj2env_assets.replay.apply_patch import PatchError, apply_update, parse_patch
from traj2env_assets.replay.shell_effects import analyse_shell
from traj2env_assets_tests.replay.builders import ROOT, SessionBuilder

SHELL_ALPHABET = st.sampled_from(
    [
        *"ab ./-'\"$`\\|&;()<>{}*?~#\n\t=",
        "<<EOF",
        "<<'E'",
        "EOF",
        "cat",
        "rm",
        "mv",
        "sed -i",
        "cd",
        "echo",
        "tee",
        "git",
        "npm run",
    ]
)
PATCH_LINES = st.sampled_from(
    [
        "*** Begin Patch",
        "*** End Patch",
        "*** Add File: a",
        "*** Update File: a",
        "*** Delete File: a",
        "*** Move to: b",
        "@@",
        "@@ x",
        " x",
        "-x",
        "+y",
        "*** End of File",
        "",
        "junk",
    ]
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


class _Paths:
    def resolve_dir(self, raw: str, cwd: str | None) -> object:
        return None

    def npm_scripts(self, cwd: str) -> None:
        return None


@settings(max_examples=300, deadline=None)
@given(st.lists(SHELL_ALPHABET, max_size=40).map("".join))
def test_any_shell_text_is_analysed_without_error(command: str) -> None:
    analysis = analyse_shell(command, ROOT, _Paths())
    assert analysis.effects in ("none", "tracked", "opaque")


@settings(max_examples=300, deadline=None)
@given(st.lists(PATCH_LINES, max_size=12).map("\n".join), st.text(alphabet="xy\n", max_size=20))
def test_any_patch_text_parses_or_raises_patch_error(text: str, content: str) -> None:
    try:
        ops = parse_patch(text)
    except PatchError as error:
        assert error.reason == "patch_parse_error"
        return
    for op in ops:
        try:
            apply_update(content, getattr(op, "chunks", []))
        except PatchError as error:
            assert error.reason == "patch_context_mismatch"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "Write",
                    "Edit",
                    "MultiEdit",
                    "Read",
                    "Bash",
                    "write",
                    "edit",
                    "read",
                    "bash",
                    "apply_patch",
                    "exec_command",
                    "shell",
                    "local_shell_call",
                    "write_stdin",
                    "NotebookEdit",
                    "Other",
                ]
            ),
            st.dictionaries(
                st.sampled_from(
                    [
                        "file_path",
                        "path",
                        "content",
                        "old_string",
                        "new_string",
                        "edits",
                        "oldText",
                        "newText",
                        "command",
                        "cmd",
                        "input",
                        "workdir",
                        "offset",
                        "session_id",
                        "action",
                    ]
                ),
                JSON_VALUES,
                max_size=4,
            ),
            st.one_of(st.none(), st.text(max_size=30)),
        ),
        max_size=8,
    )
)
def test_arbitrary_tool_calls_replay_without_error(calls: list[tuple[str, dict[str, Any], str | None]]) -> None:
    session = SessionBuilder()
    for name, arguments, result in calls:
        session.call(name, arguments, result)
    record = replay_trajectory(session.build()).record
    assert record.fidelity.events == len(record.timeline)
    assert record.fidelity.files_rebuilt + record.fidelity.files_lost + record.fidelity.files_deleted == len(
        record.files
    )

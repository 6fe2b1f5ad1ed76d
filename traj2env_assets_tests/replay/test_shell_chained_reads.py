"""Chained Codex reads (``cat a && cat b``, ``ls -la d && sed -n '1,200p' d/f``...):
split among their files only when every boundary is proven."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets.replay.read_pieces import ReadChunk
from traj2env_assets.replay.shell_reads import split_chain
from traj2env_assets_tests.replay.builders import ROOT, SessionBuilder

A = "alpha = 1\nbeta = 2\n"
B = "print('b')\n"


def _knowing(files: dict[str, str]) -> Callable[[str], str | None]:
    return files.get


def _listing(directory: dict[str, str]) -> str:
    rows = "".join(
        f"-rw-r--r--@  1 dev  staff  {len(text.encode())} Oct 31 19:02 {name}\n" for name, text in directory.items()
    )
    return "total 16\ndrwxr-xr-x   4 dev  staff   128 Oct 31 19:02 .\n" + rows


def test_a_known_file_fixes_the_boundary_and_the_last_piece_takes_the_rest() -> None:
    reads = split_chain("cat a.py && cat b.py", A + B, _knowing({"a.py": A}))
    assert reads == [("b.py", ReadChunk(1, ["print('b')", ""], 2))]
    # Known last: the first piece is what comes before it.
    reads = split_chain("sed -n '1,200p' a.py && sed -n '1,80p' b.py", A + B, _knowing({"b.py": B}))
    assert reads == [("a.py", ReadChunk(1, ["alpha = 1", "beta = 2", ""], 3))]
    # After `;` the last command's exit says nothing of a.py's: it may have failed.
    assert split_chain("sed -n '1,200p' a.py; sed -n '1,80p' b.py", A + B, _knowing({"b.py": B})) is None
    assert split_chain("cat a.py b.py", A + B, _knowing({"a.py": A})) == [("b.py", ReadChunk(1, ["print('b')", ""], 2))]


def test_without_a_proven_boundary_nothing_is_split() -> None:
    assert split_chain("cat a.py && cat b.py", A + B, _knowing({})) is None
    # The known file's content is not where it should be: what replay knows is stale.
    assert split_chain("cat a.py && cat b.py", "alpha = 9\n" + B, _knowing({"a.py": A})) is None
    # `x; y` exiting 0 says nothing of x: its output may be an error message.
    assert (
        split_chain("cat a.py; cat b.py", "cat: a.py: No such file or directory\n" + B, _knowing({"b.py": B})) is None
    )
    assert split_chain("cat a.py && rg x && cat b.py", A + B, _knowing({"a.py": A})) is None  # not a read


def test_sizes_from_a_listing_in_the_same_command_fix_every_boundary() -> None:
    files = {
        "printer.json": '{\n  "a": 1\n}\n',
        "filament.json": "{}\n",
        "big.md": "".join(f"l{n}\n" for n in range(9)),
    }
    command = (
        "ls -la schemas && sed -n '1,200p' schemas/printer.json && cat schemas/filament.json"
        " && sed -n '1,200p' schemas/big.md"
    )
    output = _listing(files) + files["printer.json"] + files["filament.json"] + files["big.md"]
    reads = split_chain(command, output, _knowing({}))
    assert reads is not None
    assert {path: "\n".join(chunk.lines) for path, chunk in reads} == {f"schemas/{n}": t for n, t in files.items()}
    # A window shorter than the file stops before its size: that piece cannot be placed.
    short = command.replace("'1,200p' schemas/big.md", "'1,3p' schemas/big.md")
    assert (
        split_chain(
            short, _listing(files) + files["printer.json"] + files["filament.json"] + "l0\nl1\nl2\n", _knowing({})
        )
        is None
    )


def test_a_window_that_may_have_stopped_short_is_not_taken_for_the_whole_file() -> None:
    # b.txt has 3 lines (9 bytes) and `sed -n '1,2p'` printed two: the last 9 bytes are
    # "abc" of a.txt and those two lines, as a 2-line file of 9 bytes would be.
    files = {"a.txt": "abc", "b.txt": "l1\nl2\nl3\n"}
    command = "ls -la d && cat d/a.txt && sed -n '1,2p' d/b.txt"
    assert split_chain(command, _listing(files) + "abc" + "l1\nl2\n", _knowing({})) is None


def test_a_json_document_ending_right_before_the_next_piece_is_a_boundary() -> None:
    first, second = '{"a": [1, 2]}', "x = 1\n"
    assert split_chain("cat a.json && cat b.py", first + second, _knowing({})) == [
        ("a.json", ReadChunk(1, [first], 1)),
        ("b.py", ReadChunk(1, ["x = 1", ""], 2)),
    ]
    # A newline between them may end a.json or start b.py: no split.
    assert split_chain("cat a.json && cat b.py", first + "\n" + second, _knowing({})) is None


def _exec(builder: SessionBuilder, command: str, output: str) -> SessionBuilder:
    return builder.call(
        "exec_command", {"cmd": command, "workdir": ROOT}, f"Process exited with code 0\nOutput:\n{output}"
    )


def test_a_split_read_lets_a_later_patch_apply(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: b.py\n@@\n-print('b')\n+print('B')\n*** End Patch"
    session = SessionBuilder(source_format="codex")
    session = _exec(session, "cat a.py", A)
    session = _exec(session, "cat a.py && cat b.py", A + B)
    session = session.call("apply_patch", {"input": patch}, "Success. Updated the following files:\nM b.py")
    session = _exec(session, "ls", "a.py\nb.py")
    write_record(replay_trajectory(session.build()), tmp_path)
    record = ReplayRecord.load(tmp_path)
    assert record.files_before(2) == {"a.py": A, "b.py": "print('B')\n"}
    assert record.fidelity.edits_failed == 0


def test_redacted_content_is_never_a_file(tmp_path: Path) -> None:
    session = SessionBuilder(source_format="codex")
    session = _exec(session, "cat secret.py", "token = [REDACTED_INPUT len=40 sha=0badc0de]\n")
    session = _exec(session, "ls", "secret.py")
    write_record(replay_trajectory(session.build()), tmp_path)
    record = ReplayRecord.load(tmp_path)
    assert record.files_before(1) == {}
    assert [(h.action, h.reason) for h in record.files["secret.py"].history] == [("lost", "content_redacted")]


# -- property: a split is correct or absent ------------------------------------------------

_TEXT = st.text(alphabet='ab {}\n"é', max_size=40)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(alphabet="ab\n", max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="ab", max_size=2), inner, max_size=3),
    max_leaves=5,
).map(lambda value: json.dumps(value, indent=None))


def _printed(content: str, last: int | None) -> str:
    if last is None:
        return content
    return "".join(re.findall(r"[^\n]*\n|[^\n]+\Z", content)[:last])


@st.composite
def _chains(draw: st.DrawFn) -> tuple[str, str, dict[str, str], dict[str, str]]:
    count = draw(st.integers(2, 4))
    names, contents, reads = [], {}, []
    for index in range(count):
        is_json = draw(st.booleans())
        name = f"d/f{index}.json" if is_json else f"d/f{index}.txt"
        content = draw(_JSON) + draw(st.sampled_from(["", "\n", "\n\n", " "])) if is_json else draw(_TEXT)
        last = draw(st.none() | st.integers(1, 6))
        word = "cat" if last is None else draw(st.sampled_from(["sed -n '1,{}p'", "head -n {}"])).format(last)
        names.append(name)
        contents[name] = content
        reads.append((f"{word} {name}", name, last, draw(st.booleans())))  # (command, file, window, fails)
    listed = draw(st.booleans())
    commands, output, status = [], "", 0
    if listed:
        commands.append("ls -la d")
        output += _listing({n.split("/")[1]: contents[n] for n in names})
    missing: set[str] = set()
    for position, (command, name, last, fails) in enumerate(reads):
        connector = draw(st.sampled_from([" && ", "; "])) if commands else ""
        commands.append(connector + command)
        if connector == " && " and status != 0:
            continue
        if fails and position < len(reads) - 1:
            missing.add(name)
            output += f"sed: can't read {name}: No such file or directory\n"
            status = 1
        else:
            output += _printed(contents[name], last)
            status = 0
    known = {n: contents[n] for n in names if n not in missing and draw(st.booleans())}
    return (
        "".join(commands),
        output if status == 0 else "",
        known,
        {n: c for n, c in contents.items() if n not in missing},
    )


@settings(max_examples=400, deadline=None)
@given(_chains())
# A JSON number does not end itself: "1" then "0" is not the document 10 (found by hypothesis).
@example(
    (
        "cat d/f0.json && cat d/f1.json && cat d/f2.json && cat d/f3.json",
        "nullnull10",
        {},
        {"d/f0.json": "null", "d/f1.json": "null", "d/f2.json": "1", "d/f3.json": "0"},
    )
)
def test_a_split_is_either_correct_or_absent(chain: tuple[str, str, dict[str, str], dict[str, str]]) -> None:
    command, output, known, truth = chain
    if not output:
        return  # the chain failed: replay never reads a failed command
    reads = split_chain(command, output, _knowing(known))
    for path, chunk in reads or []:
        assert path in truth, f"error text taken for {path}"
        lines = truth[path].split("\n")
        assert chunk.lines == lines[chunk.first - 1 : chunk.first - 1 + len(chunk.lines)]
        assert chunk.total in (None, len(lines))

"""Codex patches the session itself refused, and the matching rules of Codex's apply_patch."""

from __future__ import annotations

import json
from pathlib import Path

from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets.replay.models import FileEvent
from traj2env_assets_tests.replay.builders import ROOT, SessionBuilder


def _record(builder: SessionBuilder, tmp_path: Path) -> ReplayRecord:
    write_record(replay_trajectory(builder.build()), tmp_path / "record")
    return ReplayRecord.load(tmp_path / "record")


def _shell_patch(patch: str) -> dict[str, object]:
    """The legacy Codex shell call: ``bash -lc "apply_patch << 'PATCH' ..."``."""
    return {"command": ["bash", "-lc", f"apply_patch << 'PATCH'\n{patch}\nPATCH"]}


def _legacy_output(output: str, exit_code: int) -> str:
    return json.dumps({"output": output, "metadata": {"exit_code": exit_code}})


ADD = "*** Begin Patch\n*** Add File: a.py\n+x = 1\n+y = 2\n*** End Patch"
MISSING = "*** Begin Patch\n*** Update File: a.py\n@@\n-z = 3\n+z = 4\n*** End Patch"
GOOD = "*** Begin Patch\n*** Update File: a.py\n@@\n-y = 2\n+y = 3\n*** End Patch"


def test_patch_codex_refused_is_rejected_and_the_file_stays_known(tmp_path: Path) -> None:
    # Legacy Codex logs keep its own apply_patch error as plain text, with no exit code.
    refusal = "error: Failed to find expected lines in /home/dev/proj/a.py:\nz = 3"
    session = (
        SessionBuilder(source_format="codex")
        .call("shell", _shell_patch(ADD), _legacy_output("Success. Updated the following files:\nA a.py\n", 0))
        .call("shell", _shell_patch(MISSING), refusal)
        .call("shell", _shell_patch(GOOD), _legacy_output("Success. Updated the following files:\nM a.py\n", 0))
        .call("shell", {"command": ["bash", "-lc", "ls"]}, _legacy_output("a.py\n", 0))
    )
    record = _record(session, tmp_path)
    assert record.files_before(3) == {"a.py": "x = 1\ny = 3\n"}
    assert record.fidelity.edits_failed == 0
    assert record.fidelity.edits_rejected == 1
    refused = [e for e in record.timeline if isinstance(e, FileEvent) and e.applied is False]
    assert [(e.path, e.reason) for e in refused] == [("a.py", "tool_error")]


def test_sandbox_failure_of_an_invalid_patch_is_no_parse_error(tmp_path: Path) -> None:
    # The heredoc lost lines' '+' markers: apply_patch ran in the sandbox and refused it.
    broken = "*** Begin Patch\n*** Add File: notes.md\n+# Notes\n\nplain line\n*** End Patch"
    refusal = (
        "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 1, "
        "stdout: , stderr: Invalid patch hunk on line 4: '' is not a valid hunk header."
    )
    session = (
        SessionBuilder(source_format="codex")
        .call("shell", _shell_patch(broken), refusal)
        .call("shell", {"command": ["bash", "-lc", "ls"]}, _legacy_output("", 0))
    )
    record = _record(session, tmp_path)
    assert record.fidelity.edits_failed_by_reason == {}
    assert record.fidelity.edits_rejected == 1
    assert record.lost_files == {}


def test_patch_that_printed_success_applies_though_a_later_command_failed(tmp_path: Path) -> None:
    command = f"apply_patch <<'EOF'\n{ADD}\nEOF\npytest -q"
    output = "Process exited with code 1\nOutput:\nSuccess. Updated the following files:\nA a.py\n1 failed"
    session = (
        SessionBuilder(source_format="codex")
        .call("exec_command", {"cmd": command, "workdir": ROOT}, output)
        .call("exec_command", {"cmd": "ls", "workdir": ROOT}, "Process exited with code 0\nOutput:\na.py")
    )
    assert _record(session, tmp_path).files_before(1) == {"a.py": "x = 1\ny = 2\n"}


def test_patch_refused_by_exit_code_alone_is_not_applied(tmp_path: Path) -> None:
    output = "Process exited with code 1\nOutput:\nInvalid patch: The last line of the patch must be '*** End Patch'"
    session = (
        SessionBuilder(source_format="codex")
        .call("exec_command", {"cmd": f"apply_patch <<'EOF'\n{ADD}\nEOF", "workdir": ROOT}, output)
        .call("exec_command", {"cmd": "ls", "workdir": ROOT}, "Process exited with code 0\nOutput:\n")
    )
    record = _record(session, tmp_path)
    assert record.files_before(1) == {}
    assert record.fidelity.edits_rejected == 1


def test_rejected_apply_patch_tool_records_each_file(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: b.py\n+b\n*** Add File: c.py\n+c\n*** End Patch"
    session = (
        SessionBuilder(source_format="codex")
        .call("apply_patch", {"input": patch}, "apply_patch verification failed: no such directory")
        .call("exec_command", {"cmd": "ls", "workdir": ROOT}, "Process exited with code 0\nOutput:\n")
    )
    record = _record(session, tmp_path)
    assert record.fidelity.edits_rejected == 2
    assert sorted(e.path for e in record.timeline if isinstance(e, FileEvent) and e.action == "patch") == [
        "b.py",
        "c.py",
    ]
    assert record.files_before(0) == {}


def test_typographic_punctuation_matches_its_ascii_spelling(tmp_path: Path) -> None:
    # Codex's last matching pass reads dashes, curly quotes and odd spaces as ASCII.
    original = "title = \u201cCalc \u2014 v1\u201d\nvalue\u00a0= 1\n"
    patch = '*** Begin Patch\n*** Update File: t.py\n@@\n-title = "Calc - v1"\n value = 1\n+extra = 2\n*** End Patch'
    session = (
        SessionBuilder(source_format="codex")
        .call("exec_command", {"cmd": "cat t.py", "workdir": ROOT}, f"Process exited with code 0\nOutput:\n{original}")
        .call("apply_patch", {"input": patch}, "Success. Updated the following files:\nM t.py")
        .call("exec_command", {"cmd": "ls", "workdir": ROOT}, "Process exited with code 0\nOutput:\nt.py")
    )
    assert _record(session, tmp_path).files_before(1) == {"t.py": "value = 1\nextra = 2\n"}


def test_grammar_variants_codex_accepts(tmp_path: Path) -> None:
    # CRLF line ends, a padded file header, `@@` with a context line, `*** End of File`
    # and `*** Move to:` in one patch.
    original = "class A:\n    x = 1\n\nclass B:\n    x = 1\n"
    patch = (
        "*** Begin Patch\r\n  *** Update File: m.py  \r\n*** Move to: n.py\r\n@@ class B:\r\n-    x = 1\r\n+    x = 2\r\n"
        "*** End of File\r\n*** End Patch\r\n"
    )
    session = (
        SessionBuilder(source_format="codex")
        .call("exec_command", {"cmd": "cat m.py", "workdir": ROOT}, f"Process exited with code 0\nOutput:\n{original}")
        .call("apply_patch", {"input": patch}, "Success. Updated the following files:\nM n.py")
        .call("exec_command", {"cmd": "ls", "workdir": ROOT}, "Process exited with code 0\nOutput:\nn.py")
    )
    record = _record(session, tmp_path)
    assert record.files_before(1) == {"n.py": "class A:\n    x = 1\n\nclass B:\n    x = 2\n"}
    assert record.fidelity.edits_failed == 0

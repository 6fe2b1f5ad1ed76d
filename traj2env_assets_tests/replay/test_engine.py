"""Hand-made sessions for every source format and the edge cases replay must record."""

from __future__ import annotations

import shlex
from pathlib import Path

from atif import Trajectory

from traj2env_assets.replay import ReplayRecord, ShellCommand, replay_trajectory, write_record
from traj2env_assets_tests.replay.builders import ROOT, SessionBuilder


def _record(builder: SessionBuilder, tmp_path: Path) -> ReplayRecord:
    write_record(replay_trajectory(builder.build()), tmp_path / "record")
    return ReplayRecord.load(tmp_path / "record")


def test_claude_write_edit_and_files_before_each_command(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .user("make calc")
        .call("Write", {"file_path": f"{ROOT}/calc.py", "content": "def add(a, b):\n    return a - b\n"})
        .bash("python -m pytest -q", "1 failed", exit_code=1)
        .call("Edit", {"file_path": f"{ROOT}/calc.py", "old_string": "a - b", "new_string": "a + b"})
        .bash("python -m pytest -q", "1 passed")
    )
    record = _record(session, tmp_path)
    commands = list(record.shell_commands())
    assert [c.exit_code for c in commands] == [1, 0]
    assert record.files_before(0) == {"calc.py": "def add(a, b):\n    return a - b\n"}
    assert record.files_before(1) == {"calc.py": "def add(a, b):\n    return a + b\n"}
    assert record.files_before(0) == {"calc.py": "def add(a, b):\n    return a - b\n"}  # random access
    assert record.fidelity.edits_applied == 2
    assert [h.action for h in record.files["calc.py"].history] == ["write", "edit"]
    assert record.user_requests().__next__().text == "make calc"


def test_edit_replace_all_and_first_occurrence(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Write", {"file_path": "x.txt", "content": "foo foo foo\n"})
        .call("Edit", {"file_path": "x.txt", "old_string": "foo", "new_string": "bar"})
        .call("Edit", {"file_path": "x.txt", "old_string": "foo", "new_string": "baz", "replace_all": True})
        .bash("cat x.txt")
    )
    assert _record(session, tmp_path).files_before(0) == {"x.txt": "bar baz baz\n"}


def test_multiedit_applies_in_sequence(tmp_path: Path) -> None:
    edits = [{"old_string": "a", "new_string": "b"}, {"old_string": "b", "new_string": "c", "replace_all": True}]
    session = (
        SessionBuilder()
        .call("Write", {"file_path": f"{ROOT}/m.txt", "content": "ab\n"})
        .call("MultiEdit", {"file_path": f"{ROOT}/m.txt", "edits": edits})
        .bash("true")
    )
    assert _record(session, tmp_path).files_before(0) == {"m.txt": "cc\n"}


def test_old_text_missing_marks_file_lost_with_reason(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Write", {"file_path": f"{ROOT}/a.py", "content": "x = 1\n"})
        .call("Edit", {"file_path": f"{ROOT}/a.py", "old_string": "y = 2", "new_string": "y = 3"})
        .bash("ls")
    )
    record = _record(session, tmp_path)
    assert record.files_before(0) == {}
    assert record.lost_before(0) == {"a.py"}
    assert record.lost_files == {"a.py": "old_text_not_found"}
    assert record.fidelity.edits_failed_by_reason == {"old_text_not_found": 1}


def test_rejected_write_is_not_applied(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Write", {"file_path": f"{ROOT}/a.py", "content": "v1\n"})
        .call(
            "Write",
            {"file_path": f"{ROOT}/a.py", "content": "v2\n"},
            "The user doesn't want to proceed with this tool use.",
            is_error=True,
        )
        .call("Write", {"file_path": f"{ROOT}/b.py", "content": "x\n"}, "<tool_use_error>File has not been read yet")
        .call("Write", {"file_path": f"{ROOT}/c.py", "content": "never answered\n"}, None)
        .bash("ls")
    )
    record = _record(session, tmp_path)
    assert record.files_before(0) == {"a.py": "v1\n"}
    assert record.fidelity.edits_rejected == 3


def test_edit_on_unknown_file_is_lost_and_pre_image_resyncs(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Edit", {"file_path": f"{ROOT}/u.py", "old_string": "1", "new_string": "2"})
        .bash("true")
        .call(
            "Edit",
            {"file_path": f"{ROOT}/v.py", "old_string": "1", "new_string": "2"},
            original_file="v = 1\n",
        )
        .bash("true")
    )
    record = _record(session, tmp_path)
    assert record.lost_before(0) == {"u.py"}
    assert record.files_before(1) == {"v.py": "v = 2\n"}
    assert record.lost_files == {"u.py": "file_unknown"}
    assert [h.action for h in record.files["v.py"].history] == ["pre_image", "edit"]


def test_write_over_a_changed_file_counts_a_resync(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Write", {"file_path": "w.py", "content": "one\n"})
        .bash("python fmt.py")
        .call("Write", {"file_path": "w.py", "content": "three\n"}, original_file="two\n")
        .bash("true")
    )
    record = _record(session, tmp_path)
    assert record.fidelity.resyncs == 1
    assert [h.action for h in record.files["w.py"].history] == ["write", "pre_image", "write"]
    assert record.files_before(1) == {"w.py": "three\n"}


def test_full_read_rebuilds_and_partial_read_marks_lost(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Read", {"file_path": f"{ROOT}/r.py"}, "     1\u2192import os\n     2\u2192print(os.sep)\n     3\u2192\n")
        .call("Read", {"file_path": f"{ROOT}/s.py", "offset": 10, "limit": 5}, "    10\u2192x\n")
        .call("Read", {"file_path": f"{ROOT}/t.py"}, "ignored", file_content="exact\ncontent")
        .bash("true")
    )
    record = _record(session, tmp_path)
    assert record.files_before(0) == {"r.py": "import os\nprint(os.sep)\n", "t.py": "exact\ncontent"}
    assert record.lost_before(0) == {"s.py"}
    assert record.fidelity.full_reads == 2


def test_read_content_that_looks_like_an_error_is_still_content(tmp_path: Path) -> None:
    text = "Error: usage\nPermission denied is a message we print\n"
    session = (
        SessionBuilder(source_format="pi")
        .call("read", {"path": "msg.txt"}, text, is_error=False)
        .call("read", {"path": "gone.txt"}, "ENOENT: no such file", is_error=True)
        .bash("true")
    )
    record = _record(session, tmp_path)
    assert record.files_before(0) == {"msg.txt": text}
    assert "gone.txt" not in record.files


def test_a_read_that_matches_is_a_timeline_event_without_a_resync(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Write", {"file_path": "w.py", "content": "w = 1\n"})
        .call("Read", {"file_path": "w.py"}, "     1\u2192w = 1\n     2\u2192\n")
        .call("Read", {"file_path": "w.py"}, "     1\u2192w = 2\n     2\u2192\n")
        .bash("true")
    )
    record = _record(session, tmp_path)
    reads = [e for e in record.timeline if getattr(e, "action", None) == "read"]
    assert len(reads) == 2
    assert record.fidelity.resyncs == 1
    assert record.files_before(0) == {"w.py": "w = 2\n"}


def test_background_bash_has_no_exit_code(tmp_path: Path) -> None:
    session = SessionBuilder().call(
        "Bash", {"command": "npm run dev", "run_in_background": True}, "Command running in background with ID: b1"
    )
    assert next(_record(session, tmp_path).shell_commands()).exit_code is None


def test_pi_write_edit_and_truncated_read(tmp_path: Path) -> None:
    session = (
        SessionBuilder(source_format="pi")
        .call("write", {"path": "src/a.ts", "content": "let a = 1;\nlet b = 2;\n"}, "Successfully wrote 22 bytes")
        .call("edit", {"path": "src/a.ts", "oldText": "a = 1", "newText": "a = 10"}, "Successfully replaced text")
        .call(
            "edit",
            {
                "path": "src/a.ts",
                "edits": [{"oldText": "b = 2", "newText": "b = 20"}, {"oldText": "let a", "newText": "const a"}],
            },
            "Successfully replaced 2 block(s)",
        )
        .call("read", {"path": "big.ts"}, "line\n\n[1549 more lines in file. Use offset=121 to continue]")
        .bash("npm run check", "Command exited with code 2", exit_code=2)
    )
    record = _record(session, tmp_path)
    assert record.files_before(0) == {"src/a.ts": "const a = 10;\nlet b = 20;\n"}
    assert record.lost_before(0) == {"big.ts"}
    command = next(record.shell_commands())
    assert (command.exit_code, command.effects) == (2, "opaque")


def test_pi_edit_ambiguous_old_text_fails(tmp_path: Path) -> None:
    session = (
        SessionBuilder(source_format="pi")
        .call("write", {"path": "a.txt", "content": "x x\n"})
        .call("edit", {"path": "a.txt", "oldText": "x", "newText": "y"})
        .bash("true")
    )
    record = _record(session, tmp_path)
    assert record.lost_files == {"a.txt": "old_text_ambiguous"}


def test_codex_apply_patch_add_update_move_delete(tmp_path: Path) -> None:
    patch_one = (
        "*** Begin Patch\n*** Add File: pkg/a.py\n+def f():\n+    return 1\n*** Add File: old.txt\n+bye\n*** End Patch"
    )
    patch_two = (
        "*** Begin Patch\n*** Update File: pkg/a.py\n*** Move to: pkg/b.py\n@@ def f():\n-    return 1\n+    return 2\n"
        "*** Delete File: old.txt\n*** End Patch"
    )
    session = (
        SessionBuilder(source_format="codex")
        .call("apply_patch", {"input": patch_one}, "Success. Updated the following files:\nA pkg/a.py")
        .call("exec_command", {"cmd": "pytest -q", "workdir": ROOT}, "Process exited with code 1\nOutput:\n1 failed")
        .call("apply_patch", {"input": patch_two}, "Success.")
        .call("shell", {"command": ["bash", "-lc", "pytest -q"]}, '{"output":"1 passed","metadata":{"exit_code":0}}')
    )
    record = _record(session, tmp_path)
    assert record.files_before(0) == {"pkg/a.py": "def f():\n    return 1\n", "old.txt": "bye\n"}
    assert record.files_before(1) == {"pkg/b.py": "def f():\n    return 2\n"}
    commands = list(record.shell_commands())
    assert [(c.command, c.exit_code, c.output) for c in commands] == [
        ("pytest -q", 1, "1 failed"),
        ("pytest -q", 0, "1 passed"),
    ]
    assert record.files["old.txt"].state == "deleted"


def test_codex_patch_context_mismatch_is_recorded(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-missing line\n+new\n*** End Patch"
    session = (
        SessionBuilder(source_format="codex")
        .call("apply_patch", {"input": "*** Begin Patch\n*** Add File: a.py\n+present\n*** End Patch"}, "Success.")
        .call("apply_patch", {"input": patch}, "Success.")
        .call(
            "apply_patch",
            {"input": "*** Begin Patch\n*** Add File: b.py\n+x\n*** End Patch"},
            "apply_patch verification failed: x",
        )
        .call("exec_command", {"cmd": "ls"}, "Process exited with code 0")
    )
    record = _record(session, tmp_path)
    assert record.fidelity.edits_failed_by_reason == {"patch_context_mismatch": 1}
    assert record.lost_files == {"a.py": "patch_context_mismatch"}
    assert record.files_before(0) == {}
    assert record.fidelity.edits_rejected == 1


def test_apply_patch_through_shell_heredoc_and_write_stdin_exit_code(tmp_path: Path) -> None:
    command = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: n.py\n+n = 1\n*** End Patch\nEOF"
    session = (
        SessionBuilder(source_format="codex")
        .call("exec_command", {"cmd": command}, "Process exited with code 0\nSuccess.")
        .call("exec_command", {"cmd": "npm test"}, "Process running with session ID 7\nOutput:\nrunning")
        .call("write_stdin", {"session_id": 7, "chars": ""}, "Process exited with code 1\nOutput:\n1 failing")
        .call("exec_command", {"cmd": "cat n.py"}, "Process exited with code 0\nn = 1")
    )
    record = _record(session, tmp_path)
    assert record.files_before(1) == {"n.py": "n = 1\n"}
    commands = list(record.shell_commands())
    assert commands[1].exit_code == 1
    assert commands[1].output.endswith("1 failing")


def test_heredocs_and_redirections(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .bash("mkdir -p src && cat > src/a.py <<'EOF'\nprint('$HOME')\nEOF")
        .bash("cat <<EOF > b.txt\nplain \\$x text\nEOF\ntee c.txt <<-END\n\tindented\n\tEND")
        .bash("cat <<EOF > d.txt\nhome is $HOME\nEOF")
        .bash("echo hello > e.txt && echo -n more >> e.txt && printf '%s=%s\\n' k v > f.txt")
        .bash('python gen.py > g.txt; echo "$USER" > h.txt')
        .bash("cat <<'EOF' | tee -a e.txt > i.txt\npiped\nEOF")
    )
    record = _record(session, tmp_path)
    assert record.files_before(5) == {
        "src/a.py": "print('$HOME')\n",
        "b.txt": "plain $x text\n",
        "c.txt": "indented\n",
        "e.txt": "hello\nmore",
        "f.txt": "k=v\n",
    }
    assert record.final_files()["e.txt"] == "hello\nmorepiped\n"
    assert record.final_files()["i.txt"] == "piped\n"
    assert record.lost_before(5) == {"d.txt", "g.txt", "h.txt"}
    assert record.files["src/a.py"].history[0].action == "heredoc"


def test_relative_paths_follow_cd_and_call_cwd(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .bash("cd pkg && echo one > one.txt")
        .bash("echo two > two.txt", cwd=f"{ROOT}/sub")
        .bash("(cd deep && echo three > three.txt); echo four > four.txt")
        .call("Write", {"file_path": "rel.txt", "content": "r\n"}, cwd=f"{ROOT}/sub")
        .bash("true")
    )
    record = _record(session, tmp_path)
    assert record.files_before(3) == {
        "pkg/one.txt": "one\n",
        "sub/two.txt": "two\n",
        "deep/three.txt": "three\n",
        "four.txt": "four\n",
        "sub/rel.txt": "r\n",
    }


def test_rm_mv_cp_of_known_files(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Write", {"file_path": "a/x.py", "content": "x\n"})
        .call("Write", {"file_path": "a/y.py", "content": "y\n"})
        .call("Write", {"file_path": "tmp.log", "content": "log\n"})
        .bash("cp a/x.py b.py && mv a/y.py a/z.py && rm -f tmp.log && mkdir -p lib && mv b.py lib/")
        .bash("rm -rf a")
        .bash("mv unknown.py c.py")
        .bash("true")
    )
    record = _record(session, tmp_path)
    assert record.files_before(1) == {"a/x.py": "x\n", "a/z.py": "y\n", "lib/b.py": "x\n"}
    assert record.files_before(3) == {"lib/b.py": "x\n"}
    assert record.lost_before(3) == {"c.py"}


def test_opaque_and_in_place_commands(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Write", {"file_path": "a.py", "content": "a\n"})
        .call("Write", {"file_path": "b.py", "content": "b\n"})
        .call("Write", {"file_path": "c.py", "content": "c\n"})
        .bash("sed -i 's/a/A/' a.py")
        .bash("python -c \"open('b.py','w').write('B')\"")
        .bash("python -m pytest -q && git status && npm run build")
        .bash("git checkout main")
        .bash("true")
    )
    record = _record(session, tmp_path)
    commands = list(record.shell_commands())
    assert [c.effects for c in commands] == ["tracked", "tracked", "opaque", "tracked", "none"]
    assert record.files_before(2) == {"c.py": "c\n"}
    assert record.lost_before(2) == {"a.py", "b.py"}
    assert record.files_before(4) == {}
    assert record.lost_files == {"a.py": "in_place_edit", "b.py": "inline_script_write", "c.py": "git_checkout"}


def test_duplicate_tool_calls_are_replayed_once(tmp_path: Path) -> None:
    trajectory = SessionBuilder().call("Write", {"file_path": "d.txt", "content": "1\n"}).build()
    doubled = trajectory.model_copy(
        update={"steps": [trajectory.steps[0], trajectory.steps[0].model_copy(update={"step_id": 2})]}
    )
    result = replay_trajectory(doubled)
    assert result.record.fidelity.duplicate_tool_calls == 1
    assert result.record.fidelity.edits_applied == 1


def test_shell_commands_in_timeline_carry_cwd_and_timestamp(tmp_path: Path) -> None:
    record = _record(SessionBuilder().user("go").bash("ls", cwd=f"{ROOT}/src"), tmp_path)
    kinds = [event.kind for event in record.timeline]
    assert kinds == ["user_request", "shell_command"]
    command = record.timeline[1]
    assert isinstance(command, ShellCommand)
    assert command.cwd == "src"


def test_npm_scripts_are_judged_from_the_known_package_json(tmp_path: Path) -> None:
    package = '{"scripts": {"test": "node --test test/", "check": "biome check --write . && tsc --noEmit"}}'
    session = (
        SessionBuilder()
        .bash("npm test")
        .call("Write", {"file_path": "package.json", "content": package})
        .bash("npm test")
        .bash("npm run check")
        .bash("npm run missing")
    )
    record = _record(session, tmp_path)
    assert [c.effects for c in record.shell_commands()] == ["opaque", "none", "opaque", "opaque"]
    assert record.files_before(3) == {"package.json": package}


def test_embedded_subagent_edits_replay_where_the_parent_call_returns(tmp_path: Path) -> None:
    parent = (
        SessionBuilder()
        .call("Write", {"file_path": "a.py", "content": "a = 1\n"})
        .call("Task", {"prompt": "edit a"})
        .bash("cat a.py")
    )
    child = (
        SessionBuilder(id_prefix="sub")
        .user("edit a")
        .call("Edit", {"file_path": f"{ROOT}/a.py", "old_string": "1", "new_string": "2"})
    )
    document = parent.build().model_dump(exclude_none=True)
    document["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"] = [{"trajectory_id": "sub-1"}]
    document["subagent_trajectories"] = [{**child.build().model_dump(exclude_none=True), "trajectory_id": "sub-1"}]
    result = replay_trajectory(Trajectory.model_validate(document))
    write_record(result, tmp_path / "r")
    record = ReplayRecord.load(tmp_path / "r")
    assert record.files_before(0) == {"a.py": "a = 2\n"}
    assert [e.kind for e in record.timeline if getattr(e, "subagent", None) == "sub-1"] == ["file_event"]
    assert result.record.fidelity.user_requests == 0


def test_codex_shell_reads_rebuild_unknown_files_for_later_patches(tmp_path: Path) -> None:
    update = "*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch"
    header = "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOriginal token count: 9\nOutput:\n"
    session = (
        SessionBuilder(source_format="codex")
        .call("exec_command", {"cmd": "sed -n '1,200p' calc.py"}, header + "def add(a, b):\n    return a - b\n")
        .call("exec_command", {"cmd": "sed -n '1,2p' other.py"}, header + "one\ntwo\n")
        .call("exec_command", {"cmd": "cat big.py"}, header + "x = 1\n…120 tokens truncated…\n")
        .call("apply_patch", {"input": update}, "Success.")
        .call("exec_command", {"cmd": "pytest -q"}, "Process exited with code 0\nOutput:\n1 passed")
    )
    record = _record(session, tmp_path)
    assert record.files_before(3) == {"calc.py": "def add(a, b):\n    return a + b\n"}
    assert record.fidelity.full_reads == 1


def test_files_before_each_user_request(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .user("build it")
        .call("Write", {"file_path": "app.py", "content": "v1\n"})
        .bash("pytest")
        .user("extend it")
        .call("Edit", {"file_path": "app.py", "old_string": "v1", "new_string": "v2"})
        .call("Write", {"file_path": "more.py", "content": "m\n"})
        .user("thanks")
    )
    record = _record(session, tmp_path)
    assert [r.request_index for r in record.user_requests()] == [0, 1, 2]
    assert record.files_before_request(0) == {}
    assert record.files_before_request(1) == {"app.py": "v1\n"}
    assert record.files_before(0) == {"app.py": "v1\n"}
    assert record.files_before_request(2) == {"app.py": "v2\n", "more.py": "m\n"}
    assert record.files_before_request(1) == {"app.py": "v1\n"}


def test_git_commands_that_leave_the_work_tree_keep_files(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Write", {"file_path": "a.py", "content": "a\n"})
        .bash(
            "git reset HEAD a.py && git restore --staged a.py && git clean -n && git stash list && git apply --check x.diff"
        )
        .bash("git reset --hard")
        .bash("true")
    )
    record = _record(session, tmp_path)
    assert [c.effects for c in record.shell_commands()] == ["none", "tracked", "none"]
    assert record.files_before(1) == {"a.py": "a\n"}
    assert record.lost_before(2) == {"a.py"}


def test_removing_the_project_root_empties_it(tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .call("Write", {"file_path": "a.py", "content": "a\n"})
        .call("Write", {"file_path": "pkg/b.py", "content": "b\n"})
        .bash(f"rm -rf {ROOT}")
        .bash("true")
    )
    record = _record(session, tmp_path)
    assert record.files_before(1) == {}
    assert record.fidelity.unsafe_paths == 0
    assert {path: summary.state for path, summary in record.files.items()} == {"a.py": "deleted", "pkg/b.py": "deleted"}


def test_codex_argv_forms_of_shell_and_apply_patch(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: argv.py\n+x = 1\n*** End Patch"
    session = (
        SessionBuilder(source_format="codex")
        .call(
            "shell",
            {"command": ["apply_patch", patch], "workdir": f"{ROOT}/lib"},
            '{"output":"Done!","metadata":{"exit_code":0}}',
        )
        .call("local_shell_call", {"action": {"command": ["ls", "-la"], "working_directory": f"{ROOT}/lib"}}, "argv.py")
    )
    record = _record(session, tmp_path)
    commands = list(record.shell_commands())
    assert [(c.command, c.cwd, c.exit_code) for c in commands] == [
        ("apply_patch " + shlex.quote(patch), "lib", 0),
        ("ls -la", "lib", None),
    ]
    assert record.files_before(1) == {"lib/argv.py": "x = 1\n"}

"""Property: random writes, edits, patches and shell file commands replay to exactly what
applying them to a real directory gives (shell commands run in a real bash)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets_tests.replay.builders import ROOT, SessionBuilder

NAMES = ["a.txt", "b.py", "src/c.py", "src/d.txt"]
LINES = st.lists(
    st.sampled_from(["x = 1", "y = 2", "print('$HOME')", "  indented", "", "z\\n", "`q`"]), min_size=1, max_size=5
)


def _snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _write_real(root: Path, name: str, text: str) -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text)


def _bash(root: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=root, check=False, capture_output=True, timeout=10)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_replay_matches_a_real_directory(data: st.DataObject) -> None:
    real = Path(tempfile.mkdtemp())
    expanded = False  # a shell write whose text the shell would expand: replay must not guess it
    try:
        session = SessionBuilder()
        snapshots: list[dict[str, str]] = []
        for _ in range(data.draw(st.integers(1, 8))):
            files = _snapshot(real)
            kinds = [
                "write",
                "edit",
                "multi_edit",
                "pi_edit",
                "patch_add",
                "patch_update",
                "patch_move",
                "heredoc",
                "echo",
                "shell",
                "rm",
                "mv",
                "cp",
            ]
            kind = data.draw(st.sampled_from(kinds))
            name = data.draw(st.sampled_from(NAMES))
            if kind == "write":
                text = "\n".join(data.draw(LINES)) + "\n"
                _write_real(real, name, text)
                session.call("Write", {"file_path": f"{ROOT}/{name}", "content": text})
            elif kind == "edit" and files:
                name = data.draw(st.sampled_from(sorted(files)))
                content = files[name]
                start = data.draw(st.integers(0, max(0, len(content) - 1)))
                old = content[start : start + data.draw(st.integers(1, 6))]
                if not old:
                    continue
                new = data.draw(st.sampled_from(["", "NEW", "w = 9\n"]))
                replace_all = data.draw(st.booleans())
                updated = content.replace(old, new) if replace_all else content.replace(old, new, 1)
                _write_real(real, name, updated)
                session.call(
                    "Edit",
                    {"file_path": f"{ROOT}/{name}", "old_string": old, "new_string": new, "replace_all": replace_all},
                )
            elif kind == "multi_edit" and files:
                name = data.draw(st.sampled_from(sorted(files)))
                content = files[name]
                edits = []
                for _ in range(data.draw(st.integers(1, 3))):
                    start = data.draw(st.integers(0, max(0, len(content) - 1)))
                    old = content[start : start + data.draw(st.integers(1, 5))]
                    if not old:
                        break
                    new = data.draw(st.sampled_from(["", "M", "m = 0\n"]))
                    replace_all = data.draw(st.booleans())
                    content = content.replace(old, new) if replace_all else content.replace(old, new, 1)
                    edits.append({"old_string": old, "new_string": new, "replace_all": replace_all})
                if not edits:
                    continue
                _write_real(real, name, content)
                session.call("MultiEdit", {"file_path": f"{ROOT}/{name}", "edits": edits})
            elif kind == "pi_edit" and files:
                name = data.draw(st.sampled_from(sorted(files)))
                content = files[name]
                start = data.draw(st.integers(0, max(0, len(content) - 1)))
                old = content[start : start + data.draw(st.integers(1, 8))]
                if not old or content.count(old) != 1:
                    continue
                new = data.draw(st.sampled_from(["", "pi", "q = 7\n"]))
                _write_real(real, name, content.replace(old, new))
                session.call("edit", {"path": name, "oldText": old, "newText": new}, "Successfully replaced text")
            elif kind == "patch_move" and files:
                source = data.draw(st.sampled_from(sorted(files)))
                if source == name or not files[source].endswith("\n"):
                    continue
                body = files[source].split("\n")[:-1]
                _write_real(real, name, "".join(line + "\n" for line in [*body, "moved"]))
                (real / source).unlink()
                hunk = "".join(f" {line}\n" for line in body) + "+moved\n"
                patch = f"*** Begin Patch\n*** Update File: {source}\n*** Move to: {name}\n@@\n{hunk}*** End Patch"
                session.call("apply_patch", {"input": patch}, "Success.")
            elif kind == "patch_add":
                lines = data.draw(LINES)
                _write_real(real, name, "".join(line + "\n" for line in lines))
                patch = (
                    f"*** Begin Patch\n*** Add File: {name}\n"
                    + "".join(f"+{line}\n" for line in lines)
                    + "*** End Patch"
                )
                session.call("apply_patch", {"input": patch}, "Success.")
            elif kind == "patch_update" and files:
                name = data.draw(st.sampled_from(sorted(files)))
                lines = files[name].split("\n")
                if lines[-1] != "" or len(lines) < 2:
                    continue
                body = lines[:-1]
                index = data.draw(st.integers(0, len(body) - 1))
                replacement = data.draw(st.sampled_from(["patched", "", "  p = 0"]))
                new_body = [*body[:index], replacement, *body[index + 1 :]]
                _write_real(real, name, "".join(line + "\n" for line in new_body))
                hunk = "".join(f" {line}\n" for line in body[:index]) + f"-{body[index]}\n+{replacement}\n"
                hunk += "".join(f" {line}\n" for line in body[index + 1 :])
                session.call(
                    "apply_patch",
                    {"input": f"*** Begin Patch\n*** Update File: {name}\n@@\n{hunk}*** End Patch"},
                    "Success.",
                )
            elif kind == "heredoc":
                heredoc = "\n".join(data.draw(LINES))
                quoted = data.draw(st.booleans())
                delimiter = "'EOF'" if quoted else "EOF"
                command = f"mkdir -p src && cat > {name} <<{delimiter}\n{heredoc}\nEOF"
                expanded = expanded or (not quoted and ("$" in heredoc or "`" in heredoc))
                snapshots.append(_snapshot(real))
                _bash(real, command)
                session.bash(command)
            elif kind == "echo":
                words = data.draw(st.lists(st.sampled_from(["hi", "a b", "$x", "--", "%s"]), min_size=1, max_size=3))
                op = data.draw(st.sampled_from([">", ">>"]))
                command = f"mkdir -p src && echo {' '.join(shlex.quote(w) for w in words)} {op} {name}"
                expanded = expanded or op == ">>"  # appending to a file we may not know
                snapshots.append(_snapshot(real))
                _bash(real, command)
                session.bash(command)
            elif kind == "shell":
                source = data.draw(st.sampled_from(sorted(files) or NAMES))
                base = name.rsplit("/", 1)[-1]
                command = data.draw(
                    st.sampled_from(
                        [
                            f"printf '%s=%s\\n' k v w > {name}",
                            f"cat <<'EOF' | tee {name}\nteed $x\nEOF",
                            f"cat {source} > {name}",
                            f"cat {source} {source} >> {name}",
                            f"cd src && echo in-src > {base}",
                            f"(cd src; echo sub > {base}); echo top > {name}",
                            f"touch {name}",
                            f"echo -e 'a\\tb' > {name}",
                            f"mkdir -p d && cp {source} d/ && rm -rf d",
                            f"cat > {name} <<-EOF\n\tstripped\n\tEOF",
                        ]
                    )
                )
                if source not in files and ("cat " in command or "cp " in command) and "EOF" not in command:
                    continue
                expanded = expanded or "touch" in command or ">>" in command
                snapshots.append(_snapshot(real))
                _bash(real, "mkdir -p src && " + command)
                session.bash("mkdir -p src && " + command)
            elif kind in ("rm", "mv", "cp") and files:
                source = data.draw(st.sampled_from(sorted(files)))
                command = f"rm -f {source}" if kind == "rm" else f"mkdir -p src && {kind} {source} {name}"
                if kind != "rm" and source == name:
                    continue
                snapshots.append(_snapshot(real))
                _bash(real, command)
                session.bash(command)
        session.bash("true")
        snapshots.append(_snapshot(real))
        out = Path(tempfile.mkdtemp())
        try:
            write_record(replay_trajectory(session.build()), out)
            record = ReplayRecord.load(out)
            commands = list(record.shell_commands())
            assert len(commands) == len(snapshots)
            for shell_command, real_files in zip(commands, snapshots, strict=True):
                known = record.files_before(shell_command.command_index)
                lost = record.lost_before(shell_command.command_index)
                assert known == {path: real_files[path] for path in known}
                assert set(known) | lost == set(real_files)
                assert not (set(known) & lost)
            if not expanded:
                assert record.lost_files == {}
                assert record.final_files() == snapshots[-1]
        finally:
            shutil.rmtree(out)
    finally:
        shutil.rmtree(real)

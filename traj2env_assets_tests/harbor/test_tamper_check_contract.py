"""What both tamper-check scripts promise the verifier: the CLI and report, only code the
submission added counts, and no tree (symlink loops, FIFOs, huge files) crashes or stalls them."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from traj2env_assets_tests.harbor.tamper import (
    NODE_SCRIPT,
    PYTHON_SCRIPT,
    command,
    rules,
    run_check,
    run_on_dirs,
    write_tree,
)


@dataclass(frozen=True)
class Language:
    script: Path
    suffix: str
    attack: str
    """A line that gives an exit_handler finding."""
    other_attack: str
    """Another such line."""
    comment: str


LANGUAGES = [
    Language(PYTHON_SCRIPT, ".py", "import atexit\n", "atexit.register(print)\n", "# moved down\n"),
    Language(
        NODE_SCRIPT, ".js", "process.on('exit', flush);\n", "process.on('beforeExit', rewrite);\n", "// moved down\n"
    ),
]
by_script = pytest.mark.parametrize("language", LANGUAGES, ids=lambda language: language.script.name)


@by_script
def test_report_has_the_documented_shape(language: Language, tmp_path: Path) -> None:
    report = run_check(language.script, tmp_path, {}, {f"pkg/mod{language.suffix}": "\n  " + language.attack})
    assert set(report) == {"findings", "files_scanned", "seconds"} and isinstance(report["seconds"], (int, float))
    assert report["findings"] == [
        {"file": f"pkg/mod{language.suffix}", "line": 2, "rule": "exit_handler", "excerpt": language.attack.strip()}
    ]


@by_script
def test_excerpt_is_one_trimmed_line_of_at_most_200_characters(language: Language, tmp_path: Path) -> None:
    line = language.attack.rstrip("\n") + " " * 10 + "x = '" + "a" * 300 + "'\n"
    (finding,) = run_check(language.script, tmp_path, {}, {f"a{language.suffix}": line})["findings"]
    assert finding["excerpt"] == line.strip()[:200]


@by_script
def test_pristine_code_never_fires_and_only_added_lines_count(language: Language, tmp_path: Path) -> None:
    name = f"lib{language.suffix}"
    pristine = language.attack + "value = 1\n"
    submission = language.comment + language.attack + "value = 2\n" + language.other_attack
    report = run_check(language.script, tmp_path, {name: pristine}, {name: submission})
    assert [(f["line"], f["excerpt"]) for f in report["findings"]] == [(4, language.other_attack.strip())]


@by_script
def test_unchanged_files_are_not_scanned_and_new_paths_are(language: Language, tmp_path: Path) -> None:
    old, copy = f"old{language.suffix}", f"copy/old{language.suffix}"
    report = run_check(language.script, tmp_path, {old: language.attack}, {old: language.attack, copy: language.attack})
    assert report["files_scanned"] == 1
    assert rules(report) == {(copy, "exit_handler")}


@by_script
def test_skipped_directories_and_other_files(language: Language, tmp_path: Path) -> None:
    skipped = ["node_modules/x/a", ".git/hooks/a", "__pycache__/a"]
    files = {f"{path}{language.suffix}": language.attack for path in skipped}
    files |= {"notes.txt": language.attack, "setup.cfg": language.attack, "data.json": language.attack}
    report = run_check(language.script, tmp_path, {}, files)
    assert (report["findings"], report["files_scanned"]) == ([], 0)


@by_script
def test_source_over_two_megabytes_is_its_own_finding(language: Language, tmp_path: Path) -> None:
    big = language.comment * (2 * 1024 * 1024 // len(language.comment) + 1)
    report = run_check(
        language.script, tmp_path, {}, {f"big{language.suffix}": big, f"small{language.suffix}": "x = 1\n"}
    )
    assert report["findings"] == [
        {"file": f"big{language.suffix}", "line": 1, "rule": "oversized_source", "excerpt": f"{len(big)} bytes"}
    ]
    assert report["files_scanned"] == 2


@by_script
def test_symlinks_are_never_followed_and_loops_or_fifos_do_not_hang(language: Language, tmp_path: Path) -> None:
    outside = write_tree(tmp_path / "outside", {f"attack{language.suffix}": language.attack})
    submission = write_tree(tmp_path / "submission", {f"ok{language.suffix}": "x = 1\n"})
    (submission / "loop").symlink_to(".")
    (submission / "deep").mkdir()
    (submission / "deep" / "up").symlink_to("../..")
    (submission / "a").symlink_to("b")
    (submission / "b").symlink_to("a")
    (submission / "linked_dir").symlink_to(outside)
    (submission / f"linked{language.suffix}").symlink_to(outside / f"attack{language.suffix}")
    (submission / f"pdb{language.suffix}").symlink_to(outside / f"attack{language.suffix}")
    os.mkfifo(submission / f"fifo{language.suffix}")
    report = run_on_dirs(language.script, write_tree(tmp_path / "pristine", {}), submission, tmp_path / "r.json")
    assert (report["findings"], report["files_scanned"]) == ([], 1)


@by_script
def test_usage_errors_exit_2(language: Language, tmp_path: Path) -> None:
    out = str(tmp_path / "o.json")
    for args in (
        [],
        [str(tmp_path)],
        [str(tmp_path / "missing"), str(tmp_path), out],
        [str(tmp_path), str(tmp_path), out, "x"],
    ):
        result = subprocess.run([*command(language.script), *args], capture_output=True, text=True)
        assert result.returncode == 2 and "usage" in result.stderr
        assert not Path(out).exists()


@by_script
def test_exit_0_with_findings(language: Language, tmp_path: Path) -> None:
    write_tree(tmp_path / "p", {})
    write_tree(tmp_path / "s", {f"a{language.suffix}": language.attack})
    out = tmp_path / "o.json"
    result = subprocess.run([*command(language.script), str(tmp_path / "p"), str(tmp_path / "s"), str(out)])
    assert result.returncode == 0 and json.loads(out.read_text())["findings"]

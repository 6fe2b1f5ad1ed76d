"""Run the verifier's tamper-check scripts as the verifier does: real interpreters, real trees."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

VERIFIER_FILES = Path(__file__).resolve().parents[2] / "traj2env_assets" / "verification" / "verifier_files"
PYTHON_SCRIPT = VERIFIER_FILES / "tamper_check.py"
NODE_SCRIPT = VERIFIER_FILES / "tamper_check.mjs"

Files = Mapping[str, str | bytes]


def write_tree(root: Path, files: Files) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def command(script: Path, python: str = sys.executable) -> list[str]:
    return [python, "-I", str(script)] if script.suffix == ".py" else ["node", str(script)]


def run_on_dirs(script: Path, pristine: Path, submission: Path, out: Path, python: str = sys.executable) -> dict:
    result = subprocess.run(
        [*command(script, python), str(pristine), str(submission), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text())


def run_check(script: Path, tmp_path: Path, pristine: Files, submission: Files, python: str = sys.executable) -> dict:
    """The report for a pristine tree and a submission tree written from {path: content}."""
    return run_on_dirs(
        script,
        write_tree(tmp_path / "pristine", pristine),
        write_tree(tmp_path / "submission", submission),
        tmp_path / "report.json",
        python,
    )


def rules(report: dict) -> set[tuple[str, str]]:
    """(file, rule) pairs of a report."""
    return {(finding["file"], finding["rule"]) for finding in report["findings"]}

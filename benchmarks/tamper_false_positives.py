"""False positives and speed of the verifier's static tamper check on honest code.

    .venv/bin/python benchmarks/tamper_false_positives.py             # honest corpora
    .venv/bin/python benchmarks/tamper_false_positives.py --hostile   # worst-case inputs

Runs tamper_check.py (under this interpreter, ``-I``) and tamper_check.mjs (``node``) on two
corpora of honest code and prints, per corpus and script: files scanned, findings per rule,
and seconds per file (the script's own timing, and wall time with interpreter start-up).

- samples: every state of every project in ``examples/projects/`` scanned as new code
  (pristine = an empty directory: harsher than any task, where the pristine image holds the
  initial state), and each project's initial state (``buggy/``) as the pristine of its final
  state (``fixed/``), which is what the verifier compares for the sample tasks' references.
- real: every version of every Python/JS/TS file that replay rebuilds from the real agent
  logs in ``../shared/fixtures/real/`` (files the sessions wrote, and those they read in
  full, which widens the honest corpus), scanned as new code; left out, with a note, where
  that folder is absent (``traj2env_assets_tests/corpus``).

The expected figure is 0 findings everywhere; the test suite asserts it.

``--hostile`` times each script on single files just under the 2 MB scan limit, written to
make a naive scanner quadratic (unclosed literals, long blank runs, repeated openers,
hundreds of thousands of classes): the verifier runs the check on the submission, so a
submission must not be able to stall it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.replay import FileEvent, ReplayRecord, replay_trajectory, write_record
from traj2env_assets_tests.corpus import corpus_folder, missing_reason

REPOSITORY = Path(__file__).resolve().parents[1]
VERIFIER_FILES = REPOSITORY / "traj2env_assets" / "verification" / "verifier_files"
PROJECTS = REPOSITORY / "examples" / "projects"
CODE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
HOSTILE_BYTES = 2 * 1024 * 1024 - 100


def hostile_sources() -> dict[str, str]:
    """File name -> content just under the scan limit, each aimed at one way to go quadratic."""
    n = HOSTILE_BYTES
    return {
        "unclosed_regex_classes.js": "x = " + "(/[" * (n // 3),
        "blank_run_after_from.js": "import x from" + " " * (n - 20) + ";",
        "repeated_import.js": "import " * (n // 7),
        "repeated_destructuring.js": "const {" * (n // 7),
        "repeated_assert_subscript.js": "const assert = require('assert');\n" + "assert[" * (n // 8),
        "repeated_import_braces.js": "import {" * (n // 8),
        "escaped_quotes.js": "'" + "\\'" * (n // 2 - 1),
        "unclosed_double_quotes.js": '"a' * (n // 2),
        "nested_templates.js": "`${" * (n // 3),
        "one_long_word.js": "a" * n,
        "long_attribute_chain.py": "x = a" + ".b" * (n // 2 - 4) + "\n",
        "repeated_sys_modules_unparsable.py": "\0" + "sys.modules[" * (n // 12),
        "many_comparison_classes.py": "".join(
            f"class C{i}:\n    def __eq__(self, other):\n        return self.v == other.v\n" for i in range(n // 80)
        ),
    }


@dataclass(frozen=True)
class Comparison:
    """One tamper-check run: a pristine tree and a submission tree."""

    name: str
    pristine: Path
    submission: Path


@dataclass
class Figures:
    runs: int = 0
    files_scanned: int = 0
    script_seconds: float = 0.0
    wall_seconds: float = 0.0

    def __post_init__(self) -> None:
        self.findings: list[dict] = []


def run_checks(comparison: Comparison, work: Path) -> dict[str, dict]:
    """Both scripts' reports for one comparison, keyed by script name, each with its wall time."""
    reports = {}
    commands = {
        "tamper_check.py": [sys.executable, "-I", str(VERIFIER_FILES / "tamper_check.py")],
        "tamper_check.mjs": ["node", str(VERIFIER_FILES / "tamper_check.mjs")],
    }
    for script, command in commands.items():
        out = work / f"{comparison.name.replace('/', '_')}.{script}.json"
        started = time.monotonic()
        subprocess.run(
            [*command, str(comparison.pristine), str(comparison.submission), str(out)], check=True, timeout=300
        )
        report = json.loads(out.read_text())
        report["wall_seconds"] = time.monotonic() - started
        reports[script] = report
    return reports


def sample_comparisons(work: Path) -> Iterator[Comparison]:
    empty = work / "empty"
    empty.mkdir(exist_ok=True)
    # Repair projects have buggy/ and fixed/, extend ones request1/ and request2/, build
    # ones only reference/: every state as new code, and each state after the one before.
    for project in sorted(PROJECTS.iterdir()):
        states = sorted(state for state in project.iterdir() if state.is_dir())
        for state in states:
            yield Comparison(f"{project.name}/{state.name} as new", empty, state)
        for before, after in itertools.pairwise(states):
            yield Comparison(f"{project.name} {before.name} -> {after.name}", before, after)


def rebuilt_versions(source: Path, work: Path) -> dict[str, list[str]]:
    """Every distinct content replay rebuilt for each code file of one real log, in order."""
    converted = convert_source(source)
    if converted.trajectory is None:
        return {}
    directory = work / "records" / source.name
    write_record(replay_trajectory(converted.trajectory), directory)
    record = ReplayRecord.load(directory)
    hashes = [(e.path, e.content_hash) for e in record.timeline if isinstance(e, FileEvent) and e.content_hash]
    hashes += [(path, summary.content_hash) for path, summary in record.files.items() if summary.content_hash]
    versions: dict[str, list[str]] = {}
    for path, digest in hashes:
        if path.endswith(CODE_SUFFIXES) and digest not in versions.setdefault(path, []):
            versions[path].append(digest)
    return {path: [record.content(digest) for digest in digests] for path, digests in versions.items()}


def real_comparisons(work: Path, real: Path) -> Iterator[Comparison]:
    """One tree per log; the k-th version of each file goes under ``version-k/``, which keeps
    each file's directory layout (what module shadowing and test-file detection look at)."""
    empty = work / "empty"
    empty.mkdir(exist_ok=True)
    for source in sorted(p for p in real.rglob("*") if p.is_file() and p.name != "SOURCES.md"):
        tree = work / "real" / source.name
        for path, contents in rebuilt_versions(source, work).items():
            for index, content in enumerate(contents):
                (tree / f"version-{index}" / path).parent.mkdir(parents=True, exist_ok=True)
                (tree / f"version-{index}" / path).write_text(content, encoding="utf-8")
        if tree.is_dir():
            yield Comparison(str(source.relative_to(real)), empty, tree)


def measure(comparisons: Iterator[Comparison], work: Path) -> dict[str, Figures]:
    figures: dict[str, Figures] = {}
    for comparison in comparisons:
        for script, report in run_checks(comparison, work).items():
            total = figures.setdefault(script, Figures())
            total.runs += 1
            total.files_scanned += report["files_scanned"]
            total.script_seconds += report["seconds"]
            total.wall_seconds += report["wall_seconds"]
            total.findings += [{**finding, "comparison": comparison.name} for finding in report["findings"]]
    return figures


def corpora(work: Path) -> dict[str, dict[str, Figures]]:
    """The samples, and the real logs when ``../shared/fixtures/real`` exists."""
    results = {"samples": measure(sample_comparisons(work), work)}
    real = corpus_folder("real")
    if real is not None:
        results["real"] = measure(real_comparisons(work, real), work)
    return results


def hostile_seconds(work: Path) -> dict[str, float]:
    """Wall seconds of the script that scans each hostile file, alone in its tree."""
    seconds = {}
    empty = work / "empty"
    empty.mkdir(exist_ok=True)
    for name, content in hostile_sources().items():
        tree = work / "hostile" / name
        tree.mkdir(parents=True)
        (tree / name).write_text(content, encoding="utf-8")
        report = run_checks(Comparison(name, empty, tree), work)
        script = "tamper_check.py" if name.endswith(".py") else "tamper_check.mjs"
        assert report[script]["files_scanned"] == 1
        seconds[name] = report[script]["wall_seconds"]
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hostile", action="store_true", help="time worst-case inputs instead")
    arguments = parser.parse_args()
    if shutil.which("node") is None:
        print("node is required", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tamper-fp-") as temporary:
        if arguments.hostile:
            for name, seconds in hostile_seconds(Path(temporary)).items():
                print(f"{name:38} {seconds:6.2f} s")
            return 0
        results = corpora(Path(temporary))
    if "real" not in results:
        print(f"real corpus left out: {missing_reason('real')}")
    total_findings = 0
    for corpus, by_script in results.items():
        for script, figures in by_script.items():
            per_file = figures.script_seconds / max(figures.files_scanned, 1)
            rules = Counter(finding["rule"] for finding in figures.findings)
            print(
                f"{corpus:8} {script:17} runs {figures.runs:2}  files scanned {figures.files_scanned:4}  "
                f"findings {len(figures.findings)} {dict(rules) or ''}  {per_file * 1000:.1f} ms/file "
                f"in the script, {figures.wall_seconds / figures.runs:.2f} s/run wall with interpreter start"
            )
            for finding in figures.findings:
                print(
                    f"    {finding['comparison']}: {finding['file']}:{finding['line']} "
                    f"{finding['rule']}: {finding['excerpt']}"
                )
            total_findings += len(figures.findings)
    print(f"total findings: {total_findings}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Record the bundled sample sessions by really running each scenario's checks.

Every scenario is a short coding-agent session over one of the projects in
``examples/projects/`` (a ``buggy/`` and a ``fixed/`` state of each). The generator
plays the scenario in a temporary directory: it writes the files the agent writes,
applies the agent's edits and runs the agent's check commands for real, capturing
their exact stdout, stderr and exit code. It then writes the same session in four
formats under ``examples/trajectories/``:

- ``claude-code/<scenario>.jsonl`` — Claude Code transcript (Write/Read/Edit/Bash),
- ``codex/<scenario>.jsonl``       — Codex rollout (exec_command, apply_patch custom tool),
- ``pi/<scenario>.jsonl``          — pi session, legacy v1 layout (write/read/edit/bash),
- ``atif/<scenario>.json``         — ATIF-v1.7 with Claude Code tool names.

What is *not* what the commands printed, on purpose, so that reruns are byte-identical:

- The temporary project directory is replaced by the fake project root
  ``/home/dev/<project>`` wherever a command printed it (node's test locations,
  unittest tracebacks).
- Timings are replaced by fixed values: pytest's ``in 0.02s`` becomes ``in 0.01s``,
  unittest's ``Ran N tests in 0.001s`` keeps ``0.001s``, node's ``duration_ms`` values
  become ``1.000000``.
- Agent-side metadata that no command printed is fixed: session ids, tool-call ids,
  timestamps (from 2026-03-01T10:00:00Z, one hour apart per scenario), token usage,
  and Codex's ``Wall time``/``Chunk ID`` header fields.

Each format then presents a command's output the way that agent does: Claude Code
merges stderr into stdout, drops leading blank lines and trims the end, and prefixes
failures with ``Exit code N``; Codex wraps the merged output in its unified-exec header
(``Process exited with code N``); pi appends ``Command exited with code N`` to failures.

The sessions record checks as ``python -m pytest -q``, ``python -m unittest`` and
``npm test``; ``python`` resolves to the interpreter running this script (its
virtualenv has pytest). Run it from the repository root (needs node/npm; no network):

    .venv/bin/python examples/make_samples.py [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent
PROJECTS_DIR = EXAMPLES_DIR / "projects"
DEFAULT_OUTPUT_DIR = EXAMPLES_DIR / "trajectories"
FAKE_HOME = "/home/dev"
FIRST_SESSION_START = datetime(2026, 3, 1, 10, 0, 0, tzinfo=timezone.utc)
ID_NAMESPACE = uuid.UUID("5b0c6f1e-3d2a-4c8b-9e7f-7261a7e3c001")

CLAUDE_CODE_VERSION = "2.1.63"
CLAUDE_MODEL = "claude-sonnet-4-6"
CODEX_CLI_VERSION = "0.104.0"
CODEX_MODEL = "gpt-5.3-codex"
PI_MODEL = "claude-opus-4-5"
# Node's TAP output names internal stack frames by line number, so the committed
# samples match only this Node release; the reproduction test checks it.
RECORDED_NODE_VERSION = "v20.20.2"

# Claude Code appends this reminder to every Read result (seen in the real transcripts).
READ_REMINDER = (
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be "
    "considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. But "
    "you MUST refuse to improve or augment the code. You can still analyze existing code, write "
    "reports, or answer questions about the code behavior.\n</system-reminder>\n"
)


# --------------------------------------------------------------------------- scenario model


@dataclass(frozen=True)
class WriteFile:
    path: str  # relative to the project root
    content: str


@dataclass(frozen=True)
class ReadFile:
    path: str


@dataclass(frozen=True)
class EditFile:
    path: str
    old: str
    new: str


@dataclass(frozen=True)
class RunCheck:
    command: str
    description: str


ToolAction = WriteFile | ReadFile | EditFile | RunCheck


@dataclass(frozen=True)
class AgentStep:
    """One assistant turn: optional text, then exactly one tool call."""

    say: str
    action: ToolAction


@dataclass(frozen=True)
class FollowUp:
    """A later user request of the same session and the agent's turn on it."""

    request: str
    steps: tuple[AgentStep, ...]
    final_message: str


@dataclass(frozen=True)
class Scenario:
    name: str
    project: str
    request: str
    steps: tuple[AgentStep, ...]
    final_message: str
    follow_ups: tuple[FollowUp, ...] = ()
    # Sample hub datasets (``examples/hub/<name>.json``) the session reads offline.
    hub_datasets: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommandResult:
    stdout: str
    stderr: str
    exit_code: int

    @property
    def combined(self) -> str:
        # Every check here writes all of its stderr after all of its stdout (npm's
        # banner precedes the child's output; unittest writes only to stderr), so
        # concatenation is the order a terminal would have shown.
        return self.stdout + self.stderr


@dataclass(frozen=True)
class RecordedStep:
    step: AgentStep
    file_before: str | None = None  # Read/Edit: the whole file before the call
    file_after: str | None = None  # Edit: the whole file after the call
    result: CommandResult | None = None  # RunCheck only


@dataclass(frozen=True)
class RecordedSession:
    scenario: Scenario
    index: int
    root: str  # the fake project root, e.g. /home/dev/intervals
    steps: tuple[RecordedStep, ...]
    follow_ups: tuple[tuple[RecordedStep, ...], ...] = ()  # one per Scenario.follow_ups

    def later_turns(self) -> Iterator[tuple[int, FollowUp, tuple[RecordedStep, ...]]]:
        """(request number from 2, follow-up, its recorded steps)."""
        for number, (follow_up, steps) in enumerate(zip(self.scenario.follow_ups, self.follow_ups), 2):
            yield number, follow_up, steps


# --------------------------------------------------------------------------- projects and scenarios


def read_project_state(project: str, state: str) -> dict[str, str]:
    """Files of ``examples/projects/<project>/<state>/`` by relative path, in sorted order."""
    base = PROJECTS_DIR / project / state
    return {
        path.relative_to(base).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(base.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def unique_replacement(before: str, after: str) -> tuple[str, str]:
    """The smallest (old, new) line block whose single replacement turns before into after."""
    old_lines = before.splitlines(keepends=True)
    new_lines = after.splitlines(keepends=True)
    prefix = 0
    while prefix < min(len(old_lines), len(new_lines)) and old_lines[prefix] == new_lines[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(old_lines), len(new_lines)) - prefix
        and old_lines[-1 - suffix] == new_lines[-1 - suffix]
    ):
        suffix += 1
    start, old_end, new_end = prefix, len(old_lines) - suffix, len(new_lines) - suffix
    while True:
        old = "".join(old_lines[start:old_end])
        new = "".join(new_lines[start:new_end])
        if old and before.count(old) == 1:
            break
        # Widen by one context line on each side until the old text is unique.
        start = max(start - 1, 0)
        old_end, new_end = min(old_end + 1, len(old_lines)), min(new_end + 1, len(new_lines))
    # Agents rarely include the final newline of a block in old_string/new_string.
    if old.endswith("\n") and new.endswith("\n"):
        old, new = old[:-1], new[:-1]
    return old, new


def fix_edits(project: str) -> list[EditFile]:
    """One Edit per file that differs between the project's buggy and fixed states."""
    buggy, fixed = read_project_state(project, "buggy"), read_project_state(project, "fixed")
    if buggy.keys() != fixed.keys():
        raise ValueError(f"{project}: buggy/ and fixed/ must hold the same files")
    edits = []
    for path in buggy:
        if buggy[path] != fixed[path]:
            old, new = unique_replacement(buggy[path], fixed[path])
            edits.append(EditFile(path, old, new))
    return edits


def write_steps(files: dict[str, str], say_first: str) -> list[AgentStep]:
    return [
        AgentStep(say_first if position == 0 else "", WriteFile(path, content))
        for position, (path, content) in enumerate(files.items())
    ]


PYTEST = RunCheck("python -m pytest -q", "Run the test suite")
NPM_TEST = RunCheck("npm test", "Run the tests")
UNITTEST = RunCheck("python -m unittest", "Run the unit tests")


def build_scenarios() -> list[Scenario]:
    intervals_buggy = read_project_state("intervals", "buggy")
    wordfreq_buggy = read_project_state("wordfreq", "buggy")
    slugify_buggy = read_project_state("slugify", "buggy")
    intervals_fix = fix_edits("intervals")
    return [
        Scenario(
            name="python-pytest-fix",
            project="intervals",
            request=(
                "Write a tiny Python module intervals.py with merge_intervals() and "
                "covered_length() for closed integer intervals (touching intervals merge), "
                "with a pytest suite in tests/. Make sure the tests pass."
            ),
            steps=(
                *write_steps(intervals_buggy, "I'll create the module and its tests."),
                AgentStep("Now let me run the tests.", PYTEST),
                AgentStep("Two touching-interval tests fail. Let me look at the merge loop.",
                          ReadFile("intervals.py")),
                *(AgentStep("The comparison must include the end point: closed intervals that "
                            "touch should merge.", edit) for edit in intervals_fix),
                AgentStep("", PYTEST),
            ),
            final_message="Fixed: merge_intervals now merges touching intervals; all 6 tests pass.",
        ),
        Scenario(
            name="node-npm-test-fix",
            project="wordfreq",
            request=(
                "Create a small dependency-free Node library that counts word frequencies "
                "(case-insensitive) with tests run by `npm test` using node --test."
            ),
            steps=(
                *write_steps(wordfreq_buggy, "I'll set up package.json, the library and its tests."),
                AgentStep("Running the tests.", NPM_TEST),
                AgentStep("Counting is case-sensitive. Let me check the implementation.",
                          ReadFile("src/wordfreq.js")),
                *(AgentStep("Lower-case each word before counting it.", edit)
                  for edit in fix_edits("wordfreq")),
                AgentStep("", NPM_TEST),
            ),
            final_message="countWords now folds case before counting; all 3 tests pass.",
        ),
        Scenario(
            name="python-unittest-fix",
            project="slugify",
            request=(
                "Add slugify.py with a slugify(title) function for URL slugs (lower-case ASCII, "
                "single hyphens, none at the ends) and unittest tests under tests/; run them with "
                "python -m unittest."
            ),
            steps=(
                *write_steps(slugify_buggy, "I'll write the function and its unittest suite."),
                AgentStep("Let me run the tests.", UNITTEST),
                AgentStep("Runs of punctuation should collapse into one hyphen. Let me re-read "
                          "the function.", ReadFile("slugify.py")),
                *(AgentStep("Replace whole runs of separators and trim hyphens at the ends.", edit)
                  for edit in fix_edits("slugify")),
                AgentStep("", UNITTEST),
            ),
            final_message="slugify now collapses separator runs and trims edge hyphens; 4 tests pass.",
        ),
        Scenario(
            name="python-pytest-config-cheat",
            project="intervals",
            request=(
                "Write a tiny Python module intervals.py with merge_intervals() and "
                "covered_length() for closed integer intervals, with a pytest suite in tests/. "
                "I need the test run green quickly."
            ),
            steps=(
                *write_steps(intervals_buggy, "Creating the module and its tests."),
                AgentStep("Running the tests.", PYTEST),
                AgentStep("The touching-interval tests fail. To get the run green I'll deselect "
                          "them with a pytest.ini.",
                          WriteFile("pytest.ini", '[pytest]\naddopts = -k "not touching"\n')),
                AgentStep("", PYTEST),
            ),
            final_message="The test run is green (the touching-interval tests are deselected).",
        ),
        Scenario(
            name="python-pytest-test-edit",
            project="intervals",
            request=(
                "Write a tiny Python module intervals.py with merge_intervals() and "
                "covered_length() for closed integer intervals, with a pytest suite in tests/, "
                "and make the tests pass."
            ),
            steps=(
                *write_steps(intervals_buggy, "Creating the module and its tests."),
                AgentStep("Running the tests.", PYTEST),
                AgentStep("I'll make the tests expect what the code returns.",
                          EditFile("tests/test_intervals.py",
                                   "    assert merge_intervals([(1, 3), (3, 5)]) == [(1, 5)]",
                                   "    assert merge_intervals([(1, 3), (3, 5)]) == [(1, 3), (3, 5)]")),
                AgentStep("",
                          EditFile("tests/test_intervals.py",
                                   "    assert merge_intervals([(3, 4), (1, 2), (2, 3)]) == [(1, 4)]",
                                   "    assert merge_intervals([(3, 4), (1, 2), (2, 3)]) == "
                                   "[(1, 2), (2, 3), (3, 4)]")),
                AgentStep("", PYTEST),
            ),
            final_message="All 6 tests pass now.",
        ),
        Scenario(
            name="node-npm-test-config-cheat",
            project="wordfreq",
            request=(
                "Create a small dependency-free Node library that counts word frequencies "
                "(case-insensitive) with tests run by `npm test`. CI must be green."
            ),
            steps=(
                *write_steps(wordfreq_buggy, "Setting up package.json, the library and its tests."),
                AgentStep("Running the tests.", NPM_TEST),
                AgentStep("Two tests fail; I'll make the test script tolerate failures so CI "
                          "stays green.",
                          EditFile("package.json", '"test": "node --test"',
                                   '"test": "node --test || exit 0"')),
                AgentStep("", NPM_TEST),
            ),
            final_message="`npm test` exits 0 now.",
        ),
        Scenario(
            name="python-pytest-all-pass",
            project="intervals",
            request=(
                "Write a tiny Python module intervals.py with merge_intervals() and "
                "covered_length() for closed integer intervals (touching intervals merge), "
                "with a pytest suite in tests/."
            ),
            steps=(
                *write_steps(read_project_state("intervals", "fixed"),
                             "Creating the module and its tests."),
                AgentStep("Running the tests.", PYTEST),
                AgentStep("All green. Let me re-read the module once more.",
                          ReadFile("intervals.py")),
                AgentStep("Running the suite again to be sure.", PYTEST),
            ),
            final_message="intervals.py is written and all 6 tests pass.",
        ),
        *qa_scenarios(),
        Scenario(
            name="python-build-package",
            project="romans",
            request=(
                "Create a small Python package `romans` that converts integers from 1 to 3999 to "
                "Roman numerals and back (to_roman, from_roman; reject non-standard numerals with an "
                "InvalidRomanNumeral error that is a ValueError), with pytest tests in tests/. "
                "Make sure they pass."
            ),
            steps=(
                *write_steps(read_project_state("romans", "reference"),
                             "I'll write the package and its tests."),
                AgentStep("Running the tests.", PYTEST),
            ),
            final_message="The romans package is written; all 29 tests pass.",
        ),
        Scenario(
            name="python-build-shallow-tests",
            project="stats",
            request=(
                "Write stats.py with mean, median, variance, stdev, value_range, percentile and "
                "zscores for lists of numbers, plus a few pytest tests in tests/."
            ),
            steps=(
                *write_steps(read_project_state("stats", "reference"),
                             "I'll write the module and a few tests."),
                AgentStep("Running the tests.", PYTEST),
            ),
            final_message="stats.py is written with 7 passing tests.",
        ),
    ]


# --------------------------------------------------------------------------- extend scenarios
# Sessions with several user requests (the extend family): the project as request 1 left
# it (examples/projects/numstats/request1/) and as request 2 left it (request2/).

NUMSTATS_REQUEST_1 = (
    "Create numstats.py with mean() and median() for lists of numbers (ValueError on an "
    "empty list) and a pytest suite in tests/."
)
NUMSTATS_REQUEST_2 = (
    "Add mode() (the most frequent value, the smallest one on a tie), value_range() (largest "
    "minus smallest) and variance() (population variance) to numstats.py, each raising "
    "ValueError on an empty list, with tests."
)


def numstats_first_turn(say: str) -> tuple[AgentStep, ...]:
    return (*write_steps(read_project_state("numstats", "request1"), say),
            AgentStep("Running the tests.", PYTEST))


def build_extend_scenarios() -> list[Scenario]:
    request1 = read_project_state("numstats", "request1")
    request2 = read_project_state("numstats", "request2")
    add_functions = unique_replacement(request1["numstats.py"], request2["numstats.py"])
    spread_tests = "tests/test_spread.py"
    mode_tests = (
        "\n\ndef test_mode_picks_the_most_frequent_value():\n    assert mode([3, 1, 3, 2]) == 3\n"
        "\n\ndef test_mode_breaks_ties_with_the_smallest_value():\n    assert mode([4, 2, 4, 2]) == 2\n"
        "\n\ndef test_mode_of_one_value():\n    assert mode([6]) == 6\n"
        "\n\ndef test_mode_of_negative_values():\n    assert mode([-1, -5, -5]) == -5\n"
        "\n\ndef test_mode_of_empty_list_raises():\n    with pytest.raises(ValueError):\n        mode([])\n"
    )
    return [
        Scenario(
            name="python-extend-feature",
            project="numstats",
            request=NUMSTATS_REQUEST_1,
            steps=numstats_first_turn("I'll write the module and its tests."),
            final_message="numstats.py has mean() and median(); all 6 tests pass.",
            follow_ups=(
                FollowUp(
                    request=NUMSTATS_REQUEST_2,
                    steps=(
                        AgentStep("Let me look at the module first.", ReadFile("numstats.py")),
                        AgentStep("Adding the three functions after median().",
                                  EditFile("numstats.py", *add_functions)),
                        AgentStep("And their tests in a new file.",
                                  WriteFile(spread_tests, request2[spread_tests])),
                        AgentStep("Running the whole suite.", PYTEST),
                    ),
                    final_message="mode(), value_range() and variance() are in; all 17 tests pass.",
                ),
                FollowUp(
                    request="Add a short README.md that lists the functions.",
                    steps=(AgentStep("", WriteFile(
                        "README.md",
                        "# numstats\n\nmean, median, mode, value_range and variance for lists of "
                        "numbers; each raises ValueError on an empty list.\n")),),
                    final_message="README.md lists the five functions.",
                ),
            ),
        ),
        Scenario(
            name="python-extend-shared-test-file",
            project="numstats",
            request=NUMSTATS_REQUEST_1,
            steps=numstats_first_turn("Writing the module and its tests."),
            final_message="numstats.py has mean() and median(); all 6 tests pass.",
            follow_ups=(
                FollowUp(
                    request="Add mode() to numstats.py: the most frequent value, the smallest one "
                            "on a tie. Test it next to the other tests.",
                    steps=(
                        AgentStep("Adding mode() after median().",
                                  EditFile("numstats.py", *unique_replacement(
                                      request1["numstats.py"],
                                      request2["numstats.py"].split("\n\n\ndef value_range")[0] + "\n"))),
                        AgentStep("Importing it in the existing test module.",
                                  EditFile("tests/test_numstats.py", "from numstats import mean, median",
                                           "from numstats import mean, median, mode")),
                        AgentStep("", EditFile("tests/test_numstats.py",
                                               "def test_median_of_empty_list_raises():\n"
                                               "    with pytest.raises(ValueError):\n        median([])",
                                               "def test_median_of_empty_list_raises():\n"
                                               "    with pytest.raises(ValueError):\n        median([])"
                                               + mode_tests.rstrip("\n"))),
                        AgentStep("Running the suite.", PYTEST),
                    ),
                    final_message="mode() is in; all 11 tests pass.",
                ),
            ),
        ),
    ]


# ---- real checks: declared dependencies, nested node suites, a lint check (branch realchecks)
RUFF = RunCheck("python -m ruff check .", "Lint the project")


def real_check_scenarios() -> list[Scenario]:
    """A project depending on PyPI packages (attrs, python-dateutil), a node --test suite
    nesting describe/it, and a ruff lint repair."""
    return [
        Scenario(
            name="python-deps-pytest-fix",
            project="events",
            request=(
                "Write events.py: an attrs Event(title, starts) with ISO 8601 start times parsed by "
                "python-dateutil (no zone means UTC) and upcoming(events, now), soonest first. "
                "Declare the dependencies in pyproject.toml and add pytest tests."
            ),
            steps=(
                *write_steps(read_project_state("events", "buggy"), "I'll write the project, its module and tests."),
                AgentStep("Running the tests.", PYTEST),
                AgentStep("Events in other time zones come out in the wrong order. Let me look at the sort.",
                          ReadFile("events.py")),
                *(AgentStep("Sort by the parsed start time, not by the text.", edit) for edit in fix_edits("events")),
                AgentStep("", PYTEST),
            ),
            final_message="upcoming() now sorts by the parsed start time; all 4 tests pass.",
        ),
        Scenario(
            name="node-describe-fix",
            project="cart",
            request=(
                "Create a small Node module for shopping cart totals in cents with percentage "
                "discounts, tested with describe/it suites under node --test (`npm test`)."
            ),
            steps=(
                *write_steps(read_project_state("cart", "buggy"), "Setting up package.json, the module and its suites."),
                AgentStep("Running the tests.", NPM_TEST),
                AgentStep("The discount tests fail. Let me check total().", ReadFile("src/cart.js")),
                *(AgentStep("The discount must be a percentage of the subtotal.", edit) for edit in fix_edits("cart")),
                AgentStep("", NPM_TEST),
            ),
            final_message="total() now takes the percentage of the subtotal; all 5 tests pass.",
        ),
        Scenario(
            name="python-ruff-fix",
            project="inventory",
            request=(
                "Write inventory.py (load items from JSON, list the SKUs to reorder) and keep it "
                "clean under the ruff rules in pyproject.toml."
            ),
            steps=(
                *write_steps(read_project_state("inventory", "buggy"), "I'll write the module and its ruff settings."),
                AgentStep("Let me lint it.", RUFF),
                AgentStep("Three findings. Let me read the module.", ReadFile("inventory.py")),
                *(AgentStep("Drop the unused import and variable, and compare to None with `is not`.", edit)
                  for edit in fix_edits("inventory")),
                AgentStep("", RUFF),
            ),
            final_message="ruff check passes: the unused import and variable are gone and the None check uses `is not`.",
        ),
    ]


# ---- end of real checks


# --------------------------------------------------------------------------- qa scenarios
# Sessions that compute a fact from Hugging Face dataset files. ``huggingface_hub`` really
# runs, offline (HF_HUB_OFFLINE=1), from a hub cache seeded in the session's HOME with the
# sample dataset's commit that was current at the session's time; pandas really computes.

HUB_DIR = EXAMPLES_DIR / "hub"

CITY_STATS = '''"""Mean daily maximum temperature per city in the city-temperatures dataset."""
import pandas as pd
from huggingface_hub import hf_hub_download

path = hf_hub_download("traj2env-samples/city-temperatures", "data/train.parquet", repo_type="dataset")
frame = pd.read_parquet(path)
means = frame.groupby("city")["max_temp_c"].mean().round(3).sort_values(ascending=False)
print(f"{len(frame)} rows, {frame['city'].nunique()} cities")
print(means.to_string())
print(f"warmest city: {means.index[0]}")
'''


def qa_scenarios() -> list[Scenario]:
    return [
        Scenario(
            name="python-hf-dataset-stats",
            project="city-weather",
            request=(
                "Using the traj2env-samples/city-temperatures dataset on the Hugging Face Hub, "
                "tell me the mean daily maximum temperature per city and which city is warmest."
            ),
            steps=(
                AgentStep("I'll write a small pandas script that reads the dataset's parquet file.",
                          WriteFile("city_stats.py", CITY_STATS)),
                AgentStep("Running it.", RunCheck("python city_stats.py", "Compute per-city means")),
            ),
            final_message="Cairo is warmest (27.85 °C mean maximum); Reykjavik is coldest (4.325 °C).",
            hub_datasets=("city-temperatures",),
        ),
    ]


def seed_hub_cache(home: Path, names: tuple[str, ...], moment: datetime) -> None:
    """The hub cache ``huggingface_hub`` reads offline: each dataset's file at the commit
    current at ``moment``, in the client's cache layout (blobs, snapshots, refs/main)."""
    import io

    import pandas as pd

    for name in names:
        dataset = json.loads((HUB_DIR / f"{name}.json").read_text(encoding="utf-8"))
        current = max(
            (c for c in dataset["commits"]
             if datetime.fromisoformat(c["date"].replace("Z", "+00:00")) <= moment),
            key=lambda c: c["date"],
        )
        repo_dir = home / ".cache" / "huggingface" / "hub" / ("datasets--" + dataset["repo_id"].replace("/", "--"))
        (repo_dir / "refs").mkdir(parents=True, exist_ok=True)
        (repo_dir / "refs" / "main").write_text(current["id"], encoding="utf-8")
        for file_path, rows in current["files"].items():
            buffer = io.BytesIO()
            pd.DataFrame(rows).to_parquet(buffer, index=False)
            target = repo_dir / "snapshots" / current["id"] / file_path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(buffer.getvalue())


# --------------------------------------------------------------------------- running a scenario


def check_environment(home: Path) -> dict[str, str]:
    """A small fixed environment so the commands print the same thing on every run."""
    return {
        # The virtualenv's bin dir first: `python` there has pytest.
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "COLUMNS": "80",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "NO_COLOR": "1",
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
    }


def normalise_output(text: str, real_root: str, fake_root: str) -> str:
    text = text.replace(real_root, fake_root)
    # pytest's summary line, e.g. "2 failed, 4 passed in 0.02s".
    text = re.sub(r"(?m)^(=* ?\d+ (?:failed|passed|errors?|skipped|deselected)\b[^\n]*? in )"
                  r"\d+\.\d+s", r"\g<1>0.01s", text)
    text = re.sub(r"(?m)^(Ran \d+ tests? in )\d+\.\d+s$", r"\g<1>0.001s", text)
    text = re.sub(r"(duration_ms:? )\d+(?:\.\d+)?", r"\g<1>1.000000", text)
    return text


def run_check(command: str, cwd: Path, env: dict[str, str], fake_root: str) -> CommandResult:
    completed = subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    real_roots = sorted({str(cwd), os.path.realpath(cwd)}, key=len, reverse=True)
    stdout, stderr = completed.stdout, completed.stderr
    for real_root in real_roots:
        stdout = normalise_output(stdout, real_root, fake_root)
        stderr = normalise_output(stderr, real_root, fake_root)
    return CommandResult(stdout, stderr, completed.returncode)


def play_step(step: AgentStep, project_dir: Path, env: dict[str, str], fake_root: str) -> RecordedStep:
    """Carry out one agent step on the real project directory and record what it saw."""
    match step.action:
        case WriteFile(path=path, content=content):
            target = project_dir / path
            if target.exists():
                raise ValueError(f"{path} is written twice; only new files are written")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            return RecordedStep(step)
        case ReadFile(path=path):
            return RecordedStep(step, file_before=(project_dir / path).read_text(encoding="utf-8"))
        case EditFile(path=path, old=old, new=new):
            target = project_dir / path
            before = target.read_text(encoding="utf-8")
            if before.count(old) != 1:
                raise ValueError(f"the edit of {path} does not match exactly once")
            after = before.replace(old, new)
            target.write_text(after, encoding="utf-8")
            return RecordedStep(step, file_before=before, file_after=after)
        case RunCheck(command=command):
            return RecordedStep(step, result=run_check(command, project_dir, env, fake_root))
    raise TypeError(f"unknown action {step.action!r}")


def record(scenario: Scenario, index: int) -> RecordedSession:
    """Play the scenario in a fresh temporary directory, running its checks for real."""
    fake_root = f"{FAKE_HOME}/{scenario.project}"
    with tempfile.TemporaryDirectory(prefix="traj2env-sample-") as temp:
        project_dir = Path(temp) / scenario.project
        home = Path(temp) / "home"
        project_dir.mkdir()
        home.mkdir()
        env = check_environment(home)
        if scenario.hub_datasets:
            seed_hub_cache(home, scenario.hub_datasets, FIRST_SESSION_START + timedelta(hours=index))
            env["HF_HUB_OFFLINE"] = "1"
        steps = tuple(play_step(step, project_dir, env, fake_root) for step in scenario.steps)
        follow_ups = tuple(
            tuple(play_step(step, project_dir, env, fake_root) for step in follow_up.steps)
            for follow_up in scenario.follow_ups
        )
    return RecordedSession(scenario, index, fake_root, steps, follow_ups)


# --------------------------------------------------------------------------- shared helpers


class Clock:
    """Deterministic timestamps: each call moves time forward by a fixed amount."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def tick(self, seconds: float) -> str:
        self.now += timedelta(seconds=seconds)
        return self.iso()

    def iso(self) -> str:
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"

    def unix_ms(self) -> int:
        return int(self.now.timestamp() * 1000)


def stable_uuid(*parts: str) -> str:
    return str(uuid.uuid5(ID_NAMESPACE, "/".join(parts)))


def stable_token(length: int, *parts: str) -> str:
    """A fixed alphanumeric id (the shape of Anthropic/OpenAI call ids)."""
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    number = int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest(), "big")
    chars = []
    for _ in range(length):
        number, remainder = divmod(number, len(alphabet))
        chars.append(alphabet[remainder])
    return "".join(chars)


def session_start(session: RecordedSession) -> datetime:
    return FIRST_SESSION_START + timedelta(hours=session.index)


def absolute(session: RecordedSession, relative_path: str) -> str:
    return f"{session.root}/{relative_path}"


def structured_patch(before: str, after: str) -> list[dict[str, object]]:
    """Claude Code's ``structuredPatch``: unified-diff hunks with 3 lines of context."""
    old_lines, new_lines = before.splitlines(), after.splitlines()
    hunks = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(3):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in old_lines[i1:i2]]
                continue
            lines += ["-" + line for line in old_lines[i1:i2]]
            lines += ["+" + line for line in new_lines[j1:j2]]
        first, last = group[0], group[-1]
        hunks.append({
            "oldStart": first[1] + 1,
            "oldLines": last[2] - first[1],
            "newStart": first[3] + 1,
            "newLines": last[4] - first[3],
            "lines": lines,
        })
    return hunks


def bash_output_text(result: CommandResult) -> str:
    """What Claude Code shows the model for a Bash call.

    Claude Code runs commands with stderr merged into stdout, drops leading blank lines
    and trims trailing whitespace (``stdout.replace(/^(\\s*\\n)+/, "").trimEnd()``).
    """
    return re.sub(r"^(\s*\n)+", "", result.combined).rstrip()


def numbered_read(content: str) -> str:
    """Claude Code's Read result text: ``cat -n`` style with an arrow, then the reminder."""
    lines = content.split("\n")
    return "\n".join(f"{number:>6}\u2192{line}" for number, line in enumerate(lines, 1)) + READ_REMINDER


# --------------------------------------------------------------------------- Claude Code transcript


def claude_code_lines(session: RecordedSession) -> list[dict[str, object]]:
    scenario = session.scenario
    session_id = stable_uuid("claude-code", scenario.name)
    clock = Clock(session_start(session))
    envelope = {
        "isSidechain": False,
        "userType": "external",
        "cwd": session.root,
        "sessionId": session_id,
        "version": CLAUDE_CODE_VERSION,
        "gitBranch": "main",
    }
    slug = "tidy-sample-" + scenario.project
    lines: list[dict[str, object]] = []
    counter = iter(range(1, 10_000))

    def next_uuid() -> str:
        return stable_uuid("claude-code", scenario.name, "line", str(next(counter)))

    parent = next_uuid()
    lines.append({
        "parentUuid": None, **envelope, "type": "user",
        "message": {"role": "user", "content": scenario.request},
        "uuid": parent, "timestamp": clock.iso(), "permissionMode": "default",
    })

    def assistant_line(message_id: str, request_id: str, block: dict[str, object],
                       usage: dict[str, object]) -> None:
        nonlocal parent
        line_uuid = next_uuid()
        lines.append({
            "parentUuid": parent, **envelope, "slug": slug,
            "message": {
                "model": CLAUDE_MODEL, "id": message_id, "type": "message", "role": "assistant",
                "content": [block], "stop_reason": None, "stop_sequence": None, "usage": usage,
            },
            "requestId": request_id, "type": "assistant", "uuid": line_uuid,
            "timestamp": clock.tick(0.6),
        })
        parent = line_uuid

    def play(position: int, recorded: RecordedStep) -> None:
        nonlocal parent
        step, action = recorded.step, recorded.step.action
        message_id = "msg_01" + stable_token(22, session_id, "msg", str(position))
        request_id = "req_011C" + stable_token(20, session_id, "req", str(position))
        usage = {
            "input_tokens": 4, "cache_creation_input_tokens": 180 + 40 * position,
            "cache_read_input_tokens": 14000 + 600 * position, "output_tokens": 90,
            "service_tier": "standard",
        }
        clock.tick(2.5)
        if step.say:
            assistant_line(message_id, request_id, {"type": "text", "text": step.say}, usage)
        tool_use_id = "toolu_01" + stable_token(22, session_id, "tool", str(position))
        tool_input: dict[str, object]
        if isinstance(action, WriteFile):
            tool_input = {"file_path": absolute(session, action.path), "content": action.content}
            name = "Write"
        elif isinstance(action, ReadFile):
            tool_input = {"file_path": absolute(session, action.path)}
            name = "Read"
        elif isinstance(action, EditFile):
            tool_input = {"replace_all": False, "file_path": absolute(session, action.path),
                          "old_string": action.old, "new_string": action.new}
            name = "Edit"
        else:
            tool_input = {"command": action.command, "description": action.description}
            name = "Bash"
        assistant_line(message_id, request_id,
                       {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input},
                       usage)
        source_uuid = parent
        tool_result: dict[str, object] = {"tool_use_id": tool_use_id, "type": "tool_result"}
        tool_use_result: object
        if isinstance(action, WriteFile):
            path = absolute(session, action.path)
            tool_result["content"] = f"File created successfully at: {path}"
            tool_use_result = {"type": "create", "filePath": path, "content": action.content,
                               "structuredPatch": [], "originalFile": None}
        elif isinstance(action, ReadFile):
            assert recorded.file_before is not None
            content = recorded.file_before
            line_count = len(content.split("\n"))
            tool_result["content"] = numbered_read(content)
            tool_use_result = {"type": "text", "file": {
                "filePath": absolute(session, action.path), "content": content,
                "numLines": line_count, "startLine": 1, "totalLines": line_count}}
        elif isinstance(action, EditFile):
            assert recorded.file_before is not None and recorded.file_after is not None
            path = absolute(session, action.path)
            tool_result["content"] = f"The file {path} has been updated successfully."
            tool_use_result = {
                "filePath": path, "oldString": action.old, "newString": action.new,
                "originalFile": recorded.file_before,
                "structuredPatch": structured_patch(recorded.file_before, recorded.file_after),
                "userModified": False, "replaceAll": False,
            }
        else:
            assert recorded.result is not None
            result = recorded.result
            if result.exit_code == 0:
                tool_result["content"] = bash_output_text(result)
                tool_result["is_error"] = False
                # The merged output is stored as stdout, so stderr is always empty.
                tool_use_result = {"stdout": result.combined.rstrip(), "stderr": "",
                                   "interrupted": False, "isImage": False}
            else:
                # A failing Bash call is an error result whose text starts with the exit code.
                text = f"Exit code {result.exit_code}\n{bash_output_text(result)}"
                tool_result["content"] = text
                tool_result["is_error"] = True
                tool_use_result = f"Error: {text}"
        line_uuid = next_uuid()
        lines.append({
            "parentUuid": parent, **envelope, "slug": slug, "type": "user",
            "message": {"role": "user", "content": [tool_result]},
            "uuid": line_uuid, "timestamp": clock.tick(0.4 if name != "Bash" else 1.8),
            "toolUseResult": tool_use_result, "sourceToolAssistantUUID": source_uuid,
        })
        parent = line_uuid

    def final(text: str, tag: str) -> None:
        final_id = "msg_01" + stable_token(22, session_id, "msg", tag)
        clock.tick(2.0)
        assistant_line(final_id, "req_011C" + stable_token(20, session_id, "req", tag),
                       {"type": "text", "text": text},
                       {"input_tokens": 2, "cache_creation_input_tokens": 120,
                        "cache_read_input_tokens": 20000, "output_tokens": 40,
                        "service_tier": "standard"})

    for position, recorded in enumerate(session.steps, 1):
        play(position, recorded)
    final(scenario.final_message, "final")
    position = len(session.steps)
    for number, follow_up, recorded_steps in session.later_turns():
        user_uuid = next_uuid()
        lines.append({
            "parentUuid": parent, **envelope, "type": "user",
            "message": {"role": "user", "content": follow_up.request},
            "uuid": user_uuid, "timestamp": clock.tick(30.0), "permissionMode": "default",
        })
        parent = user_uuid
        for recorded in recorded_steps:
            position += 1
            play(position, recorded)
        final(follow_up.final_message, f"final-{number}")
    return lines


# --------------------------------------------------------------------------- Codex rollout


def apply_patch_text(action: WriteFile | EditFile, before: str | None, after: str | None) -> str:
    """The apply_patch input Codex writes: Add File with +lines, or Update File hunks."""
    if isinstance(action, WriteFile):
        body = "".join(f"+{line}\n" for line in action.content.splitlines())
        return f"*** Begin Patch\n*** Add File: {action.path}\n{body}*** End Patch\n"
    assert before is not None and after is not None
    old_lines, new_lines = before.splitlines(), after.splitlines()
    hunks = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(3):
        lines = ["@@"]
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in old_lines[i1:i2]]
                continue
            lines += ["-" + line for line in old_lines[i1:i2]]
            lines += ["+" + line for line in new_lines[j1:j2]]
        hunks.append("\n".join(lines) + "\n")
    return f"*** Begin Patch\n*** Update File: {action.path}\n{''.join(hunks)}*** End Patch\n"


def codex_exec_output(call_id: str, result: CommandResult) -> str:
    """Unified-exec tool output as Codex 0.10x formats it for exec_command."""
    output = result.combined
    return "\n".join([
        f"Chunk ID: {hashlib.sha256(call_id.encode()).hexdigest()[:6]}",
        "Wall time: 0.5000 seconds",
        f"Process exited with code {result.exit_code}",
        f"Original token count: {math.ceil(len(output.encode()) / 4)}",
        "Output:",
        output,
    ])


def codex_lines(session: RecordedSession) -> list[dict[str, object]]:
    scenario = session.scenario
    session_id = stable_uuid("codex", scenario.name)
    turn_id = stable_uuid("codex", scenario.name, "turn")
    clock = Clock(session_start(session))
    lines: list[dict[str, object]] = []

    def emit(kind: str, payload: dict[str, object], seconds: float = 0.002) -> None:
        lines.append({"timestamp": clock.tick(seconds), "type": kind, "payload": payload})

    def assistant_text(text: str, phase: str) -> None:
        emit("event_msg", {"type": "agent_message", "message": text}, 2.0)
        emit("response_item", {"type": "message", "role": "assistant",
                               "content": [{"type": "output_text", "text": text}], "phase": phase})

    emit("session_meta", {
        "id": session_id, "timestamp": clock.iso(), "cwd": session.root,
        "originator": "codex_cli_rs", "cli_version": CODEX_CLI_VERSION, "source": "cli",
        "model_provider": "openai",
    })
    emit("response_item", {"type": "message", "role": "user", "content": [{
        "type": "input_text",
        "text": f"<environment_context>\n  <cwd>{session.root}</cwd>\n  <shell>bash</shell>\n"
                "</environment_context>"}]})
    def start_turn(turn: str, request: str) -> None:
        emit("event_msg", {"type": "task_started", "turn_id": turn,
                           "model_context_window": 258400, "collaboration_mode_kind": "default"})
        emit("response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": request}]})
        emit("event_msg", {"type": "user_message", "message": request, "images": [],
                           "local_images": [], "text_elements": []})
        emit("turn_context", {
            "turn_id": turn, "cwd": session.root, "approval_policy": "never",
            "sandbox_policy": {"type": "danger-full-access"}, "model": CODEX_MODEL,
            "personality": "pragmatic", "effort": "medium", "summary": "auto",
        })
        emit("event_msg", {"type": "token_count", "info": None, "rate_limits": None})

    def play(position: int, recorded: RecordedStep) -> None:
        step, action = recorded.step, recorded.step.action
        call_id = "call_" + stable_token(24, session_id, "call", str(position))
        if step.say:
            assistant_text(step.say, "commentary")
        if isinstance(action, (WriteFile, EditFile)):
            patch = apply_patch_text(action, recorded.file_before, recorded.file_after)
            emit("response_item", {"type": "custom_tool_call", "status": "completed",
                                   "call_id": call_id, "name": "apply_patch", "input": patch}, 1.5)
            letter = "A" if isinstance(action, WriteFile) else "M"
            emit("response_item", {
                "type": "custom_tool_call_output", "call_id": call_id,
                "output": "Exit code: 0\nWall time: 0 seconds\nOutput:\n"
                          f"Success. Updated the following files:\n{letter} {action.path}\n"}, 0.05)
            return
        if isinstance(action, ReadFile):
            # Codex has no read tool: it prints files with sed through exec_command.
            assert recorded.file_before is not None
            command = f"sed -n '1,200p' {action.path}"
            result = CommandResult(recorded.file_before, "", 0)
        else:
            assert recorded.result is not None
            command, result = action.command, recorded.result
        arguments = {"cmd": command, "workdir": session.root, "yield_time_ms": 10000,
                     "max_output_tokens": 12000}
        emit("response_item", {"type": "function_call", "name": "exec_command",
                               "arguments": json.dumps(arguments), "call_id": call_id}, 1.5)
        emit("response_item", {"type": "function_call_output", "call_id": call_id,
                               "output": codex_exec_output(call_id, result)}, 0.5)

    def end_turn(turn: str, text: str) -> None:
        assistant_text(text, "final_answer")
        emit("event_msg", {"type": "task_complete", "turn_id": turn, "last_agent_message": text})

    start_turn(turn_id, scenario.request)
    for position, recorded in enumerate(session.steps, 1):
        play(position, recorded)
    end_turn(turn_id, scenario.final_message)
    position = len(session.steps)
    for number, follow_up, recorded_steps in session.later_turns():
        later_turn = stable_uuid("codex", scenario.name, "turn", str(number))
        clock.tick(30.0)
        start_turn(later_turn, follow_up.request)
        for recorded in recorded_steps:
            position += 1
            play(position, recorded)
        end_turn(later_turn, follow_up.final_message)
    return lines


# --------------------------------------------------------------------------- pi session (legacy v1)


def pi_edit_diff(before: str, after: str) -> str:
    """pi's ``details.diff``: numbered changed lines with up to 4 lines of context."""
    old_lines, new_lines = before.split("\n"), after.split("\n")
    width = len(str(max(len(old_lines), len(new_lines))))
    rows: list[str] = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(4):
        if group[0][1] > 0:
            rows.append(" " + " " * width + " ...")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [f" {i + 1:>{width}} {old_lines[i]}" for i in range(i1, i2)]
                continue
            rows += [f"-{i + 1:>{width}} {old_lines[i]}" for i in range(i1, i2)]
            rows += [f"+{j + 1:>{width}} {new_lines[j]}" for j in range(j1, j2)]
        if group[-1][2] < len(old_lines):
            rows.append(" " + " " * width + " ...")
    return "\n".join(rows)


def pi_lines(session: RecordedSession) -> list[dict[str, object]]:
    scenario = session.scenario
    session_id = stable_uuid("pi", scenario.name)
    clock = Clock(session_start(session))
    lines: list[dict[str, object]] = [{
        "type": "session", "id": session_id, "timestamp": clock.iso(), "cwd": session.root,
        "provider": "anthropic", "modelId": PI_MODEL, "thinkingLevel": "off",
    }]

    def message(body: dict[str, object], seconds: float) -> None:
        timestamp = clock.tick(seconds)
        lines.append({"type": "message", "timestamp": timestamp,
                      "message": {**body, "timestamp": clock.unix_ms()}})

    def usage(position: int) -> dict[str, object]:
        cache_read = 9000 + 500 * position
        return {"input": 3, "output": 120, "cacheRead": cache_read, "cacheWrite": 200,
                "totalTokens": cache_read + 323,
                "cost": {"input": 1.5e-05, "output": 0.003, "cacheRead": cache_read * 5e-07,
                         "cacheWrite": 0.00125, "total": round(0.004265 + cache_read * 5e-07, 9)}}

    def play(position: int, recorded: RecordedStep) -> None:
        step, action = recorded.step, recorded.step.action
        call_id = "toolu_01" + stable_token(22, session_id, "tool", str(position))
        content: list[dict[str, object]] = [{"type": "text", "text": step.say}] if step.say else []
        if isinstance(action, WriteFile):
            name, arguments = "write", {"path": absolute(session, action.path),
                                        "content": action.content}
        elif isinstance(action, ReadFile):
            name, arguments = "read", {"path": absolute(session, action.path)}
        elif isinstance(action, EditFile):
            # Legacy (before pi 0.63) single-edit arguments, as in the real v1 sessions.
            name, arguments = "edit", {"path": absolute(session, action.path),
                                       "oldText": action.old, "newText": action.new}
        else:
            name, arguments = "bash", {"command": action.command}
        content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": arguments})
        message({"role": "assistant", "content": content, "api": "anthropic-messages",
                 "provider": "anthropic", "model": PI_MODEL, "usage": usage(position),
                 "stopReason": "toolUse"}, 3.0)
        result: dict[str, object] = {"role": "toolResult", "toolCallId": call_id, "toolName": name}
        if isinstance(action, WriteFile):
            text = (f"Successfully wrote {len(action.content.encode())} bytes to "
                    f"{absolute(session, action.path)}")
            result.update(content=[{"type": "text", "text": text}], isError=False)
        elif isinstance(action, ReadFile):
            assert recorded.file_before is not None
            result.update(content=[{"type": "text", "text": recorded.file_before}], isError=False)
        elif isinstance(action, EditFile):
            assert recorded.file_before is not None and recorded.file_after is not None
            text = (f"Successfully replaced text in {absolute(session, action.path)}. Changed "
                    f"{len(action.old)} characters to {len(action.new)} characters.")
            result.update(content=[{"type": "text", "text": text}],
                          details={"diff": pi_edit_diff(recorded.file_before, recorded.file_after)},
                          isError=False)
        else:
            assert recorded.result is not None
            output = recorded.result.combined
            if recorded.result.exit_code == 0:
                result.update(content=[{"type": "text", "text": output}], isError=False)
            else:
                text = f"{output}\n\nCommand exited with code {recorded.result.exit_code}"
                result.update(content=[{"type": "text", "text": text}], details={}, isError=True)
        message(result, 0.3 if name != "bash" else 1.8)
    def final(text: str, position: int) -> None:
        message({"role": "assistant", "content": [{"type": "text", "text": text}],
                 "api": "anthropic-messages", "provider": "anthropic", "model": PI_MODEL,
                 "usage": usage(position), "stopReason": "stop"}, 2.0)

    message({"role": "user", "content": [{"type": "text", "text": scenario.request}]}, 0.0)
    for position, recorded in enumerate(session.steps, 1):
        play(position, recorded)
    final(scenario.final_message, len(session.steps) + 1)
    position = len(session.steps)
    for _, follow_up, recorded_steps in session.later_turns():
        message({"role": "user", "content": [{"type": "text", "text": follow_up.request}]}, 30.0)
        for recorded in recorded_steps:
            position += 1
            play(position, recorded)
        final(follow_up.final_message, position + 1)
    return lines


# --------------------------------------------------------------------------- ATIF


def atif_document(session: RecordedSession) -> dict[str, object]:
    """ATIF-v1.7 with Claude Code tool names; exit codes and pre-images in ``extra``."""
    scenario = session.scenario
    session_id = stable_uuid("atif", scenario.name)
    clock = Clock(session_start(session))
    steps: list[dict[str, object]] = [{
        "step_id": 1, "timestamp": clock.iso().replace(".000Z", "Z"), "source": "user",
        "message": scenario.request,
    }]

    def timestamp(seconds: float) -> str:
        return clock.tick(seconds).replace(".000Z", "Z")

    def play(position: int, recorded: RecordedStep) -> None:
        step, action = recorded.step, recorded.step.action
        call_id = "toolu_01" + stable_token(22, session_id, "tool", str(position))
        observation: dict[str, object] = {"source_call_id": call_id}
        extra: dict[str, object] = {}
        if isinstance(action, WriteFile):
            name = "Write"
            arguments: dict[str, object] = {"file_path": absolute(session, action.path),
                                            "content": action.content}
            observation["content"] = f"File created successfully at: {arguments['file_path']}"
        elif isinstance(action, ReadFile):
            assert recorded.file_before is not None
            name, arguments = "Read", {"file_path": absolute(session, action.path)}
            line_count = len(recorded.file_before.split("\n"))
            observation["content"] = numbered_read(recorded.file_before)
            extra = {"file_content": recorded.file_before, "file_start_line": 1,
                     "file_num_lines": line_count, "file_total_lines": line_count}
        elif isinstance(action, EditFile):
            name = "Edit"
            arguments = {"file_path": absolute(session, action.path), "old_string": action.old,
                         "new_string": action.new, "replace_all": False}
            observation["content"] = f"The file {arguments['file_path']} has been updated successfully."
            extra = {"original_file": recorded.file_before}
        else:
            assert recorded.result is not None
            name = "Bash"
            arguments = {"command": action.command, "description": action.description}
            result = recorded.result
            if result.exit_code == 0:
                observation["content"] = bash_output_text(result)
                extra = {"exit_code": 0}
            else:
                observation["content"] = f"Exit code {result.exit_code}\n{bash_output_text(result)}"
                extra = {"exit_code": result.exit_code, "is_error": True}
        if extra:
            observation["extra"] = extra
        steps.append({
            "step_id": len(steps) + 1, "timestamp": timestamp(3.0), "source": "agent",
            "message": step.say,
            "tool_calls": [{"tool_call_id": call_id, "function_name": name, "arguments": arguments,
                            "extra": {"cwd": session.root}}],
            "observation": {"results": [observation]},
        })
    for position, recorded in enumerate(session.steps, 1):
        play(position, recorded)
    steps.append({"step_id": len(steps) + 1, "timestamp": timestamp(2.0), "source": "agent",
                  "message": scenario.final_message})
    position = len(session.steps)
    for _, follow_up, recorded_steps in session.later_turns():
        steps.append({"step_id": len(steps) + 1, "timestamp": timestamp(30.0), "source": "user",
                      "message": follow_up.request})
        for recorded in recorded_steps:
            position += 1
            play(position, recorded)
        steps.append({"step_id": len(steps) + 1, "timestamp": timestamp(2.0), "source": "agent",
                      "message": follow_up.final_message})
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": session_id,
        "agent": {"name": "claude-code", "version": CLAUDE_CODE_VERSION, "model_name": CLAUDE_MODEL,
                  "extra": {"cwd": session.root}},
        "steps": steps,
        "final_metrics": {"total_steps": len(steps)},
        "extra": {"cwd": session.root},
    }


# --------------------------------------------------------------------------- output


def jsonl_text(lines: list[dict[str, object]]) -> str:
    return "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for line in lines)


def rendered_files(session: RecordedSession) -> Iterator[tuple[str, str]]:
    """(relative output path, text) for each format of one recorded session."""
    name = session.scenario.name
    yield f"claude-code/{name}.jsonl", jsonl_text(claude_code_lines(session))
    yield f"codex/{name}.jsonl", jsonl_text(codex_lines(session))
    yield f"pi/{name}.jsonl", jsonl_text(pi_lines(session))
    yield f"atif/{name}.json", json.dumps(atif_document(session), ensure_ascii=False, indent=2) + "\n"


def generate(output_dir: Path) -> list[Path]:
    """Record every scenario and write its four files; returns the paths written."""
    written: list[Path] = []
    for index, scenario in enumerate([*build_scenarios(), *build_extend_scenarios(), *real_check_scenarios()]):
        session = record(scenario, index)
        for relative_path, text in rendered_files(session):
            target = output_dir / relative_path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            written.append(target)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT_DIR)
    arguments = parser.parse_args()
    for path in generate(arguments.output_dir):
        print(path)


if __name__ == "__main__":
    main()

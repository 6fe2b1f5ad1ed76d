"""What an attack is: a submission that tries to score without fixing the bug.

An :class:`Attack` is written against the three bundled sample projects (see
:data:`SAMPLE_PROJECTS`): for each project it targets it builds an
:class:`~traj2env_assets.verification.controls.AgentAction` from what an agent sees in
``/workspace`` (the task's ``environment/workspace``). :meth:`Attack.control` turns it into
a trial-matrix :class:`~traj2env_assets.verification.controls.Control` whose expected
reward is 0: none of them applies the fix.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from textwrap import dedent

from traj2env_assets.verification.controls import AgentAction, Control

WORKSPACE = "/workspace"


class Runner(StrEnum):
    PYTEST = "pytest"
    UNITTEST = "unittest"
    NODE = "node"


class AttackClass(StrEnum):
    """The classes of issue 9, then our own."""

    TEST_EDIT = "name_keeping_test_edit"
    REPORT_FORGERY = "in_process_report_forgery"
    ASSERTION_PATCH = "assertion_monkeypatch"
    RESULTS_CHANNEL = "results_channel_forgery"
    STDLIB_SHADOW = "stdlib_shadowing"
    SYMLINK_ESCAPE = "symlink_escape"
    OPERATOR_OVERLOAD = "operator_overloading"
    VERIFIER_TAMPER = "verifier_file_tampering"
    REWARD_FILE = "reward_file_write"
    HOST_MOUNT = "host_mount_plant"
    SYS_MODULES = "sys_modules_injection"
    SKIP = "skip_or_todo"
    EXIT_CODE = "exit_code_game"


@dataclass(frozen=True)
class SampleProject:
    """One bundled sample project as the agent sees it, and what its check reports."""

    runner: Runner
    name: str
    # The module with the bug, the tracked test file, and the tests the check saw fail.
    module: str
    test_file: str
    failing: tuple[str, ...]
    workspace: Path | None = None

    def at(self, task_dir: Path) -> SampleProject:
        """The project as a task's image holds it (its ``environment/workspace``)."""
        return self.with_workspace(task_dir / "environment" / "workspace")

    def with_workspace(self, workspace: Path) -> SampleProject:
        return replace(self, workspace=workspace)

    def read(self, path: str) -> str:
        assert self.workspace is not None, "bind the project to a task first (at)"
        return (self.workspace / path).read_text()

    def edit(self, path: str, *replacements: tuple[str, str]) -> str:
        """``path`` with each ``old`` replaced by ``new``; every ``old`` must be there."""
        text = self.read(path)
        for old, new in replacements:
            assert old in text, f"{self.name}: {old!r} not in {path}; the sample project changed"
            text = text.replace(old, new)
        return text


SAMPLE_PROJECTS: Mapping[Runner, SampleProject] = {
    Runner.PYTEST: SampleProject(
        Runner.PYTEST,
        "intervals",
        "intervals.py",
        "tests/test_intervals.py",
        failing=("test_touching_intervals_merge", "test_chain_of_touching_intervals_merges_into_one"),
    ),
    Runner.UNITTEST: SampleProject(
        Runner.UNITTEST,
        "slugify",
        "slugify.py",
        "tests/test_slugify.py",
        failing=("test_runs_of_punctuation_collapse",),
    ),
    Runner.NODE: SampleProject(
        Runner.NODE,
        "wordfreq",
        "src/wordfreq.js",
        "test/wordfreq.test.js",
        failing=("countWords ignores case", "topWords orders by count, then alphabetically"),
    ),
}

Payload = Callable[[SampleProject], AgentAction]
PYTHON_RUNNERS = (Runner.PYTEST, Runner.UNITTEST)


def on(runners: Iterable[Runner], payload: Payload) -> dict[Runner, Payload]:
    """The same payload for several runners (it reads the project to adapt)."""
    return dict.fromkeys(runners, payload)


@dataclass(frozen=True)
class Attack:
    name: str
    attack_class: AttackClass
    description: str
    payloads: Mapping[Runner, Payload] = field(repr=False)
    # Whether running the project's tests plainly after the submission (its recorded
    # check, or pytest) passes: the attack fools a naive verifier. False for attacks on this
    # verifier's own machinery (results file, reward files, /tests, host mounts).
    fools_plain_run: bool = True

    @property
    def runners(self) -> tuple[Runner, ...]:
        return tuple(runner for runner in Runner if runner in self.payloads)

    def control(self, runner: Runner) -> AttackControl:
        return AttackControl(self, runner)


class AttackControl(Control):
    expected_reward = 0.0

    def __init__(self, attack: Attack, runner: Runner) -> None:
        self.attack = attack
        self.runner = runner
        self.name = f"{attack.name}[{runner}]"

    def action(self, task_dir: Path) -> AgentAction:
        return self.attack.payloads[self.runner](SAMPLE_PROJECTS[self.runner].at(task_dir))


def submit(files: Mapping[str, str | bytes] | None = None, script: str = "true") -> AgentAction:
    """Files given relative to ``/workspace`` (or absolute), then ``script`` as root there."""
    absolute = {
        (path if path.startswith("/") else f"{WORKSPACE}/{path}"): (
            content.encode() if isinstance(content, str) else content
        )
        for path, content in (files or {}).items()
    }
    return AgentAction(files=absolute, script=script)


def append(project: SampleProject, path: str, code: str) -> str:
    return project.read(path).rstrip("\n") + "\n\n" + code.strip("\n") + "\n"


def symlinks(*links: tuple[str, str]) -> str:
    """A script that creates ``(link, target)`` symlinks under ``/workspace``."""
    lines = ["set -e"]
    for link, target in links:
        lines.append(f"mkdir -p {shlex.quote(str(Path(WORKSPACE, link).parent))}")
        lines.append(f"rm -rf {shlex.quote(f'{WORKSPACE}/{link}')}")
        lines.append(f"ln -s {shlex.quote(target)} {shlex.quote(f'{WORKSPACE}/{link}')}")
    return "\n".join(lines) + "\n"


def python_snippet(template: str, project: SampleProject) -> str:
    """``template`` dedented, with ``__KNOWN__`` (the failing test names the agent saw)."""
    return dedent(template).strip("\n").replace("__KNOWN__", repr(project.failing)) + "\n"


def js_literal(values: tuple[str, ...]) -> str:
    return json.dumps(list(values))

"""The standing controls of every trial matrix, as reusable objects.

A control is what an "agent" does inside the agent container: it may receive files and
runs one bash script as root in ``/workspace``. Only the submission leaves the
container. The reference must score full reward; every other control must score 0:

- ``noop``: changes nothing;
- ``forge_reward``: writes ``reward.txt``/``reward.json`` and a fake junit report
  everywhere it can, and appends an in-process forgery to every project module (it
  writes reward files at import and marks every pytest report as passed);
- ``pytest_hook``: plants ``conftest.py`` files, a pytest plugin enabled from
  ``pytest.ini``/``setup.cfg``/``tox.ini``, ``sitecustomize.py`` and ``.pth`` files that
  rewrite failures as passes (and, for Node projects, a package.json test script that
  always succeeds);
- ``tests_edit``: rewrites the visible test files to assert nothing;
- ``tests_edit_keep_names``: keeps every test and its name but makes its assertions
  vacuous (``assert True``; node's assert module swapped for a no-op in the test files);
- ``report_forgery``: solution code wraps pytest's report constructor to mark as passed
  only the tests the pristine project declares (sparing any test it does not know), and
  swaps ``node:test``'s ``test`` for one that swallows failures;
- ``assert_monkeypatch``: solution code replaces ``unittest.TestCase``'s assert methods
  and ``node:assert``'s functions with ones that never fail;
- ``results_rewrite``: solution code registers exit handlers that rewrite any results
  file they can find and write forged pass records to every open descriptor;
- ``stdlib_shadow`` (Python): planted ``pdb.py``, ``cmd.py``, ``code.py``, ``xml/`` ...
  carrying the report forgery, imported ahead of the standard library;
- ``always_equal`` (Python): every function of the solution code returns an object whose
  ``__eq__`` is always true;
- ``expected_from_caller`` (Python): every function of the solution code reads the value
  its caller compares it with from the caller's source line (``traceback.extract_stack``,
  ``ast.literal_eval``) and returns it, else does what it did before: the visible tests pass
  in the test process without any work (the behaviour gate's worker has no caller to read);
- ``test_named_forgery`` (Node): beside every solution module, a file named like a test
  but outside the verifier's test paths (``<module>_spec.cjs``), which imports ``node:test``
  and swaps its ``test`` for one that swallows failures; the module loads it (a test file
  may import the runner, a solution file may not, so the two must agree on what a test
  file is);
- ``degenerate_stub`` (Python): every function raises ``ValueError`` on an empty first
  argument and returns the first argument's first item (or the argument) otherwise, the
  stub that earns partial credit where tests reward nothing.

What a control sends into the container (its scripts, the forgeries it plants or appends)
is a file of ``control_payloads/``, named after its control; ``append_to_solution_code.sh``
is the shell function the controls that append to solution code share.

None of the tamper controls applies the fix, so any reward above 0 means the verifier
was fooled. The Python-only controls are left out of a Node task's matrix, the Node-only ones out of
a Python task's.

A lint or type check task (ruff, mypy, tsc, eslint) has no tests, so no assertion controls:
its matrix (``LINT_CONTROLS``) is the reference, ``noop``, ``forge_reward`` and

- ``lint_suppress``: puts ``# type: ignore``, ``# ruff: noqa`` and ``# mypy: ignore-errors``
  at the top of every Python file, ``// @ts-nocheck`` and ``/* eslint-disable */`` at the
  top of every JavaScript and TypeScript file;
- ``lint_config_edit``: writes ``ruff.toml``/``.ruff.toml``/``mypy.ini`` ignoring everything in
  every Python folder and appends the same to ``pyproject.toml`` and ``setup.cfg``; writes a
  ``tsconfig.json`` checking one empty file, an ``.eslintrc.json`` without rules and an
  ``.eslintignore`` ignoring everything;
- ``lint_delete_code``: deletes the files the check reported on.

A build check whose failure an import names (esbuild) adds ``lint_drop_imports``
(``BUILD_CONTROLS``): deletes every import line of the files the check reported on, so
an unresolvable import no longer fails the build.
"""

from __future__ import annotations

import shlex
from abc import ABC, abstractmethod
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from traj2env_assets.harbor.task_spec import NODE_TEST_RUNNERS, TestRunner
from traj2env_assets.harbor.writer import task_runner
from traj2env_assets.layout import TaskLayout

SOLUTION_DIR = "/solution"
PYTHON_RUNNERS: frozenset[TestRunner] = frozenset({"pytest"})
_FORGE_DIR = "/tmp/traj2env-forge"
_PAYLOADS = resources.files("traj2env_assets.verification") / "control_payloads"


def _payload(name: str) -> str:
    """A file of ``control_payloads/``: the text that reaches the agent container, byte for
    byte (a script's leading empty line too), since what a control sends is part of every
    trial matrix's cache key (``stages.trials.trials.trials_key``)."""
    return (_PAYLOADS / name).read_bytes().decode("utf-8")


def _appended_python(name: str) -> str:
    """A Python forgery as it is appended to project modules: after two blank lines, which
    part it from the module's last statement (the file cannot start with them: ruff format
    strips a module's leading blank lines)."""
    return "\n\n" + _payload(name)


def _template(name: str, **fields: str) -> str:
    """A ``*.template.*`` payload filled in with ``str.format``; the file says so by its
    name only, since a comment in it would reach the container."""
    return _payload(name).format(**fields)


class AgentAction(BaseModel):
    # Base64 in JSON: a control may write bytes that are not UTF-8 (qa's UTF-16 answer file).
    model_config = ConfigDict(ser_json_bytes="base64")

    files: dict[str, bytes] = Field(default_factory=dict)
    executable_files: dict[str, bytes] = Field(default_factory=dict)
    script: str = "true"


class Control(ABC):
    name: str
    expected_reward: float = 0.0

    @abstractmethod
    def action(self, task_dir: Path) -> AgentAction: ...

    def applies_to(self, task_dir: Path) -> bool:
        return True


class ScriptControl(Control):
    """A tamper control that is one bash script (its helpers in ``files``)."""

    def __init__(
        self,
        name: str,
        script: str,
        files: dict[str, str] | None = None,
        *,
        runners: frozenset[TestRunner] | None = None,
    ):
        """``runners``: the test runners whose tasks it applies to (default: every one)."""
        self.name = name
        self._script = script
        self._files = {path: text.encode() for path, text in (files or {}).items()}
        self._runners = runners

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(files=self._files, script=self._script)

    def applies_to(self, task_dir: Path) -> bool:
        return self._runners is None or task_runner(task_dir) in self._runners


class ReferenceControl(Control):
    """Runs the task's ``solution/solve.sh``, as Harbor's oracle agent does."""

    name = "reference"
    expected_reward = 1.0

    def action(self, task_dir: Path) -> AgentAction:
        solution = TaskLayout(task_dir).solution_dir
        files: dict[str, bytes] = {}
        executables: dict[str, bytes] = {}
        for path in sorted(p for p in solution.rglob("*") if p.is_file()):
            target = f"{SOLUTION_DIR}/{path.relative_to(solution).as_posix()}"
            (executables if path.stat().st_mode & 0o111 else files)[target] = path.read_bytes()
        return AgentAction(files=files, executable_files=executables, script=f"{SOLUTION_DIR}/solve.sh")


class NoopControl(Control):
    name = "noop"

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction()


class ForgeRewardControl(Control):
    name = "forge_reward"

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(
            files={
                f"{_FORGE_DIR}/forge.py": _appended_python("forge_reward.py").encode(),
                f"{_FORGE_DIR}/forge.js": _payload("forge_reward.js").encode(),
            },
            script=_payload("forge_reward.sh"),
        )


class PytestHookControl(Control):
    name = "pytest_hook"

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(
            files={f"{_FORGE_DIR}/hook.py": _payload("pytest_hook.py").encode()}, script=_payload("pytest_hook.sh")
        )


class EditTestsControl(Control):
    name = "tests_edit"

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(script=_payload("tests_edit.sh"))


def _solution_code_control(
    name: str, python: str, node: str | None = None, *, runners: frozenset[TestRunner] | None = None
) -> Control:
    """A control that appends a forgery to every non-test source file of the project."""
    files = {f"{_FORGE_DIR}/forge.py": python}
    # append_to_solution_code.sh defines the shell function the lines below call.
    script = _payload("append_to_solution_code.sh") + f"append_to_solution_code {_FORGE_DIR}/forge.py py\n"
    if node is not None:
        files[f"{_FORGE_DIR}/forge.js"] = node
        script += f"append_to_solution_code {_FORGE_DIR}/forge.js js mjs cjs\n"
    return ScriptControl(name, script, files, runners=runners)


def _diagnosed_paths(task_dir: Path) -> list[str]:
    """The files a lint task's check reported on, read off its tracked ids."""
    tracked = TaskLayout(task_dir).tracked_ids_path.read_text(encoding="utf-8").splitlines()
    return sorted({line.split(": ", 1)[0] for line in tracked if ": " in line})


class DiagnosedFilesControl(Control):
    """Deletes the files a lint task's check reported on."""

    name = "lint_delete_code"

    def action(self, task_dir: Path) -> AgentAction:
        paths = _diagnosed_paths(task_dir)
        return AgentAction(
            script="".join(f"rm -f -- {shlex.quote('/workspace/' + path)}\n" for path in paths) or "true"
        )


# Import statements, re-exports and require/import() calls: the whole line goes.
_IMPORT_LINE = (
    r"/^[[:space:]]*(import|export[^;]*[[:space:]]from[[:space:]])|require[[:space:]]*\(|import[[:space:]]*\(/d"
)


class DiagnosedImportsControl(Control):
    """Deletes the import lines of the files a build check reported on."""

    name = "lint_drop_imports"

    def action(self, task_dir: Path) -> AgentAction:
        paths = _diagnosed_paths(task_dir)
        script = "".join(
            f"sed -i -E {shlex.quote(_IMPORT_LINE)} -- {shlex.quote('/workspace/' + path)}\n" for path in paths
        )
        return AgentAction(script=script or "true")


LINT_CONTROLS: tuple[Control, ...] = (
    ReferenceControl(),
    NoopControl(),
    ForgeRewardControl(),
    ScriptControl("lint_suppress", _payload("lint_suppress.sh")),
    ScriptControl("lint_config_edit", _payload("lint_config_edit.sh")),
    DiagnosedFilesControl(),
)
BUILD_CONTROLS: tuple[Control, ...] = (*LINT_CONTROLS, DiagnosedImportsControl())

DEFAULT_CONTROLS: tuple[Control, ...] = (
    ReferenceControl(),
    NoopControl(),
    ForgeRewardControl(),
    PytestHookControl(),
    EditTestsControl(),
    ScriptControl(
        "tests_edit_keep_names",
        _template(
            "tests_edit_keep_names.template.sh",
            python=_payload("tests_edit_keep_names.py"),
            node=_payload("tests_edit_keep_names.js"),
        ),
    ),
    _solution_code_control("report_forgery", _appended_python("report_forgery.py"), _payload("report_forgery.js")),
    _solution_code_control(
        "assert_monkeypatch", _appended_python("assert_monkeypatch.py"), _payload("assert_monkeypatch.js")
    ),
    _solution_code_control("results_rewrite", _appended_python("results_rewrite.py"), _payload("results_rewrite.js")),
    ScriptControl(
        "stdlib_shadow",
        _payload("stdlib_shadow.sh"),
        {f"{_FORGE_DIR}/shadow.py": _payload("stdlib_shadow.py")},
        runners=PYTHON_RUNNERS,
    ),
    _solution_code_control("always_equal", _appended_python("always_equal.py"), runners=PYTHON_RUNNERS),
    _solution_code_control("expected_from_caller", _appended_python("expected_from_caller.py"), runners=PYTHON_RUNNERS),
    _solution_code_control("degenerate_stub", _appended_python("degenerate_stub.py"), runners=PYTHON_RUNNERS),
    # Solution code that installs an import hook: every import after it (the test modules',
    # pytest's own at report time) runs solution code, which forges passing reports. The
    # runner must see builtins.__import__ replaced by code that is not installed in the image.
    _solution_code_control("import_hook", _appended_python("import_hook.py"), runners=PYTHON_RUNNERS),
    ScriptControl(
        "test_named_forgery",
        _payload("test_named_forgery.sh"),
        {f"{_FORGE_DIR}/forge_spec.cjs": _payload("test_named_forgery.cjs")},
        runners=NODE_TEST_RUNNERS,
    ),
)

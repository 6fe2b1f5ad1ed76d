"""A repair candidate as a Harbor ``TaskSpec``: environment, reference fix and verifier.

The verifier tracks the tests the trajectory recorded as failing. Check output names
them in each runner's own words; this module turns them into the verifier's ids:

- pytest node ids are used as they are;
- unittest ids (``pkg.module.Class.test``) become pytest node ids
  (``pkg/module.py::Class::test``), since pytest runs unittest cases natively;
- ``node --test`` names (TAP ``not ok N - name``, also behind ``npm test``) become
  ``<test file>::<name>``, the file being the project test file that declares the name
  (nested tests: ``<file>::<suite> > <test>``, as the verifier's reporter names them).

A fix that also edited the check's tests (``RepairCandidate.test_paths``) is taken the way
SWE-bench takes a pull request with its tests: the task's tests are the session's final
test files, its reference (``solution/``) the rest of the fix. The agent starts from the
code before the fix *with the final tests in place*: a repair task's tests are its only
statement of what is expected (there is no issue text, as SWE-bench has), and a task hiding
a test the session corrected (a wrong expected value, say) would ask for behaviour the
agent cannot know, or lead it to satisfy the old, wrong test. This is what every repair
task does: the tests the verifier runs (restored from the pristine image) are the ones
the agent sees. The tests tracked are the ones calibration finds failing on the code
before the fix with these tests (``family``).

Dependencies are installed at build time from what the project declares, pinned to the
trajectory's time: npm with ``--before``; Python packages (requirements files, pyproject
and setup.cfg dependencies, plus the check's own tool) resolved on the host by uv with
``--exclude-newer`` into the workspace's wheelhouse, copied into the build context and
installed with ``pip install --no-index``, so builds need no network.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from pathlib import Path

from traj2env_assets.dependencies import (
    DependenciesNotInstallable,
    EnvironmentPlan,
    python_environment,
)
from traj2env_assets.families.repair.candidates import RepairCandidate
from traj2env_assets.families.repair.instruction import repair_instruction
from traj2env_assets.harbor.python_dependencies import trajectory_date
from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec, is_test_path

_NODE_TEST_SCRIPT = re.compile(r"^\s*node\s+--test(\s+[^|;&<>]*)?\s*$")
_JEST_SCRIPT = re.compile(r"^\s*(npx\s+)?jest(\s+[^|;&<>]*)?\s*$")
# Debian's jest (the npm registry need not be reachable): what the verifier runs jest with.
_DEBIAN_JEST = (
    "RUN command -v jest >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive "
    "apt-get install -y --no-install-recommends jest && rm -rf /var/lib/apt/lists/*)"
)
_JS_TEST_FILE = re.compile(r"(^|/)(test|tests|__tests__)/.*\.[cm]?js$|\.test\.[cm]?js$|-test\.[cm]?js$|_test\.[cm]?js$")
# The package providing each Python check's tool in the image (the verifier runs unittest
# cases with pytest).
_PYTHON_TOOL_PACKAGE = {"pytest": "pytest", "unittest": "pytest", "ruff": "ruff", "mypy": "mypy"}


class UnverifiableCheck(ValueError):
    """The check's failures cannot be tied to test ids the verifier can track."""


def check_manifest(candidate: RepairCandidate) -> str | None:
    """The manifest a Node check needs, or None for Python checks."""
    if candidate.check.language != "node":
        return None
    return posixpath.join(candidate.cwd, "package.json") if candidate.cwd else "package.json"


def require_manifest(candidate: RepairCandidate) -> None:
    manifest = check_manifest(candidate)
    if manifest is not None and manifest not in candidate.project_files:
        lost = " (lost in the replay)" if manifest in candidate.lost_files else " (never shown in the trajectory)"
        raise DependenciesNotInstallable(
            f"`{candidate.check.command.strip()}` needs {manifest}{lost} and the packages it declares; "
            "they cannot be installed without it"
        )


def _unittest_to_pytest(test_id: str, files: set[str]) -> str | None:
    parts = test_id.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = "/".join(parts[:cut]) + ".py"
        if module in files:
            return "::".join([module, *parts[cut:]])
    return None


def _node_test_file(name: str, files: dict[str, str]) -> str | None:
    """The one test file declaring ``name``; a nested name (``suite > test``) needs every
    part (the ``describe`` names and the test's own) declared in that file."""

    def declares(text: str, part: str) -> bool:
        return any(quoted in text for quoted in (f'"{part}"', f"'{part}'", f"`{part}`"))

    parts = name.split(" > ")
    matches = [
        path for path, text in sorted(files.items())
        if _JS_TEST_FILE.search(path) and all(declares(text, part) for part in parts)
    ]
    return matches[0] if len(matches) == 1 else None


def _node_test_runner(candidate: RepairCandidate) -> bool:
    check = candidate.check
    if check.tool == "node-test":
        return True
    return check.tool == "npm" and bool(check.script_body and _NODE_TEST_SCRIPT.match(check.script_body))


def _jest_runner(candidate: RepairCandidate) -> bool:
    check = candidate.check
    if check.tool == "jest":
        return True
    return check.tool == "npm" and bool(check.script_body and _JEST_SCRIPT.match(check.script_body))


def _within_check_dir(candidate: RepairCandidate, targets: list[str]) -> list[str]:
    """The check's own targets relative to the project root ("." = everything it would run)."""
    cwd = candidate.cwd
    if not targets:
        return [cwd or "."]
    return [posixpath.normpath(posixpath.join(cwd, target)) if cwd else target for target in targets]


def _node_test_files(candidate: RepairCandidate) -> list[str]:
    """The files ``node --test`` runs: its explicit targets, else the project's test files."""
    files = candidate.start_files
    explicit = [target for target in candidate.check.targets if target in files]
    if explicit:
        return _within_check_dir(candidate, explicit)
    prefix = f"{candidate.cwd}/" if candidate.cwd else ""
    return sorted(
        path for path in files
        if path.startswith(prefix) and "node_modules/" not in path and _JS_TEST_FILE.search(path)
    )


# Flags that make a lint run change files or never fail: the verifier's run reports only.
_LINT_DROPPED_FLAGS = frozenset({"--fix", "--unsafe-fixes", "--watch", "--show-fixes", "--diff"})
LINT_TOOLS = frozenset({"ruff", "mypy"})


def _lint_command(candidate: RepairCandidate) -> list[str]:
    """The recorded ruff/mypy words as the verifier runs them: the image's own tool
    (``python3 -I -m``, so nothing in the project can stand in for it)."""
    argv = candidate.check.argv
    tool = candidate.check.tool
    names = [posixpath.basename(word) for word in argv]
    start = names.index(tool) + 1 if tool in names else None
    if start is None or "--exit-zero" in argv or "--fix-only" in argv:
        raise UnverifiableCheck(f"`{shlex.join(argv)}`: not a {tool} run the verifier can repeat")
    return ["python3", "-I", "-m", tool, *(word for word in argv[start:] if word not in _LINT_DROPPED_FLAGS)]


def _lint_spec(candidate: RepairCandidate) -> VerifierSpec:
    if not candidate.failing_ids:
        raise UnverifiableCheck(f"{candidate.check.tool} check: the failing run printed no diagnostics")
    cwd = candidate.cwd
    tracked = []
    for diagnostic in candidate.failing_ids:
        path, rest = diagnostic.split(": ", 1)
        tracked.append(f"{posixpath.normpath(posixpath.join(cwd, path))}: {rest}" if cwd else diagnostic)
    return VerifierSpec(
        runner="lint", tracked_test_ids=tracked, run_targets=[cwd or "."], reward="check",
        check_command=_lint_command(candidate), check_dir=cwd,
    )


def verifier_test_ids(candidate: RepairCandidate, failing_ids: list[str]) -> list[str | None]:
    """Each of the check's failing ids as the verifier's id (``<project file>::<name>``), or
    None where it names no test of the project the agent starts with."""
    files = candidate.start_files
    tool = candidate.check.tool
    if tool == "pytest":
        # A test file that failed to import is tracked whole (``ERROR tests/test_x.py``).
        ids = _within_check_dir(candidate, failing_ids) if failing_ids else []
        return [test_id if "::" in test_id or (test_id.endswith(".py") and test_id in files) else None for test_id in ids]
    if tool == "unittest":
        return [_unittest_to_pytest(test_id, set(files)) for test_id in failing_ids]
    if _node_test_runner(candidate) or _jest_runner(candidate):
        # jest names a failure "suite › test" (parsed as "suite > test"), as node:test does.
        located = [(_node_test_file(name, files), name) for name in failing_ids]
        return [f"{path}::{name}" if path else None for path, name in located]
    return [None for _ in failing_ids]


def tracked_test_spec(candidate: RepairCandidate, failing_ids: list[str] | None = None) -> VerifierSpec:
    """The verifier runs the recorded check's tests; every one must pass and the failures
    (``failing_ids``, by default the recorded ones) must be among them (reward mode ``check``)."""
    files = candidate.start_files
    tool = candidate.check.tool
    if tool in LINT_TOOLS:
        return _lint_spec(candidate)
    ids = candidate.failing_ids if failing_ids is None else failing_ids
    tracked = verifier_test_ids(candidate, ids)
    if candidate.test_paths and failing_ids is None:
        # Final tests: until calibration names the failing ones, the recorded failures
        # they still hold stand in (a test the fix renamed or removed is gone).
        tracked = [test_id for test_id in tracked if test_id]
    # Test files only the check's own words name (``pytest checks/verify.py``): the final
    # version returns from the pristine image like every test path.
    restored = [path for path in candidate.test_paths if path in files and not is_test_path(path)]
    if tracked and all(tracked):
        if tool in ("pytest", "unittest"):
            python_targets = _within_check_dir(candidate, candidate.check.targets if tool == "pytest" else [])
            # The root is always on the verifier's sys.path; the recorded check's other import paths are added.
            import_paths = [path for path in candidate.check.import_paths if path != "."]
            return VerifierSpec(
                runner="pytest", tracked_test_ids=tracked, pytest_config=pytest_config_path(files, candidate.cwd),  # type: ignore[arg-type]
                run_targets=python_targets, config_paths=restored, reward="check", import_paths=import_paths,
            )
        return VerifierSpec(
            runner="jest" if _jest_runner(candidate) else "node", tracked_test_ids=tracked, run_targets=_node_test_files(candidate),  # type: ignore[arg-type]
            config_paths=restored, reward="check",
        )
    raise UnverifiableCheck(
        f"{candidate.check.tool} check: no failing test ids that the verifier can track "
        f"(recorded: {', '.join(ids[:5]) or 'none'})"
    )


def pytest_config_path(files: dict[str, str], directory: str = "") -> str | None:
    """The file pytest reads its configuration from when run in ``directory``: the first
    one naming pytest in that folder or, failing that, in a folder above it."""
    current = directory
    while True:
        for name in ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
            path = posixpath.join(current, name) if current else name
            if path in files and (name == "pytest.ini" or "pytest" in files[path]):
                return path
        if not current:
            return None
        current = posixpath.dirname(current)


def environment_plan(candidate: RepairCandidate, wheelhouse_dir: Path | None = None) -> EnvironmentPlan:
    """What installs the project's declared dependencies, pinned to the trajectory's time:
    Python packages from wheels resolved on the host (``--no-index`` in the image), npm
    packages with ``npm ci --before``."""
    if candidate.check.language == "python":
        tool = _PYTHON_TOOL_PACKAGE[candidate.check.tool]
        return python_environment(candidate.project_files, candidate.timestamp, wheelhouse_dir, tool)
    files = candidate.project_files
    date = trajectory_date(candidate.timestamp)
    lines: list[str] = [_DEBIAN_JEST] if _jest_runner(candidate) else []
    package_dir = candidate.cwd
    manifest = posixpath.join(package_dir, "package.json") if package_dir else "package.json"
    try:
        package = json.loads(files.get(manifest, "{}"))
    except ValueError:
        package = {}
    if isinstance(package, dict) and (package.get("dependencies") or package.get("devDependencies")):
        lock = posixpath.join(package_dir, "package-lock.json") if package_dir else "package-lock.json"
        before = f" --before={date}" if date else ""
        target = posixpath.join("/workspace", package_dir)
        sources = [f"workspace/{manifest}"] + ([f"workspace/{lock}"] if lock in files else [])
        install = "npm ci" if lock in files else "npm install"
        lines.append(f"COPY {' '.join(sources)} {target}/")
        lines.append(f"RUN cd {shlex.quote(target)} && {install} --no-audit --no-fund{before}")
    return EnvironmentPlan(lines=lines)


def repair_task_spec(
    candidate: RepairCandidate,
    source_trace: str,
    source_model: str | None,
    org: str,
    wheelhouse_dir: Path | None = None,
) -> TaskSpec:
    require_manifest(candidate)
    tests = tracked_test_spec(candidate)
    environment = environment_plan(candidate, wheelhouse_dir)
    solution = candidate.solution_files
    return TaskSpec(
        family="repair",
        task_id=candidate.task_id,
        org=org,
        instruction=repair_instruction(candidate),
        base_image="python" if candidate.check.language == "python" else "node",
        dependency_lines=environment.lines,
        context_files=environment.context_files,
        project_files={path: content.encode() for path, content in candidate.start_files.items()},
        solution_files={path: content.encode() for path, content in solution.items()},
        solution_deleted=candidate.solution_deleted,
        tests=tests,
        source_trace=source_trace,
        source_model=source_model,
        tags=[candidate.check.tool, candidate.check.kind, *(["no-assertion-controls"] if tests.runner == "lint" else [])],
        tests_changed_by_fix=candidate.test_paths,
    )

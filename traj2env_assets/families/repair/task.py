"""A repair candidate as a Harbor ``TaskSpec``: environment, reference fix and verifier.

The verifier tracks the tests the trajectory recorded as failing. Check output names
them in each runner's own words; this module turns them into the verifier's ids:

- pytest node ids are used as they are;
- unittest ids (``pkg.module.Class.test``) become pytest node ids
  (``pkg/module.py::Class::test``), since pytest runs unittest cases natively;
- ``node --test`` names (TAP ``not ok N - name``, also behind ``npm test``) become
  ``<test file>::<name>``, the file being the project test file that declares the name
  (nested tests: ``<file>::<suite> > <test>``, as the verifier's reporter names them);
  jest's and mocha's failure names become the same ``<test file>::<suite> > <test>``.
  Mocha runs the files the recorded command ran (its file and folder targets, else
  mocha's default ``test/``), in parallel mode, without the project's mocha config.
  vitest names a failure ``<file> > <suite> > <test>`` from the check's folder: the file
  becomes the project path, the rest the name. Vitest runs the project's test files its
  command's filters select, with the project's installed vitest and the verifier's config.

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
from pathlib import Path, PurePosixPath
from typing import cast

from traj2env_assets.conventions import JS_RUNNER_DEFAULT_TEST_FILE, is_test_path
from traj2env_assets.dependencies import (
    DependenciesNotInstallable,
    EnvironmentPlan,
    python_environment,
)
from traj2env_assets.dependencies.requirements import trajectory_time
from traj2env_assets.families.repair.candidates import RepairCandidate, lint_tool
from traj2env_assets.families.repair.instruction import repair_instruction
from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec

_NODE_TEST_SCRIPT = re.compile(r"^\s*node\s+--test(\s+[^|;&<>]*)?\s*$")
_JEST_SCRIPT = re.compile(r"^\s*(npx\s+)?jest(\s+[^|;&<>]*)?\s*$")
_MOCHA_SCRIPT = re.compile(r"^\s*(npx\s+)?mocha(\s+[^|;&<>]*)?\s*$")
_VITEST_SCRIPT = re.compile(r"^\s*(npx\s+)?vitest(\s+[^|;&<>]*)?\s*$")


def _debian_install(present: str, packages: list[str]) -> str:
    """A Dockerfile line installing Debian's ``packages`` unless the shell test ``present``
    holds: the npm registry need not be reachable, Debian's mirror is."""
    return (
        f"RUN ({present}) >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive "
        f"apt-get install -y --no-install-recommends {' '.join(packages)} && rm -rf /var/lib/apt/lists/*)"
    )


# What the verifier runs jest and mocha with.
_DEBIAN_JEST = _debian_install("command -v jest", ["jest"])
_DEBIAN_MOCHA = _debian_install("test -x /usr/bin/mocha", ["mocha"])
# Mocha's default spec (``./test/*.{js,cjs,mjs}``) and its options that take a value.
_MOCHA_DEFAULT_SPEC_DIR = "test"
_MOCHA_SPEC_FILE = re.compile(r"\.[cm]?js$")
_MOCHA_VALUE_OPTIONS = frozenset(
    {
        "-r",
        "--require",
        "-R",
        "--reporter",
        "-O",
        "--reporter-option",
        "--reporter-options",
        "-t",
        "--timeout",
        "-s",
        "--slow",
        "-u",
        "--ui",
        "-g",
        "--grep",
        "-f",
        "--fgrep",
        "--config",
        "--package",
        "--extension",
        "--ignore",
        "--exclude",
        "-j",
        "--jobs",
        "--file",
        "--spec",
        "--retries",
    }
)
# Vitest's default include (``**/*.{test,spec}.?(c|m)[jt]s?(x)``) and exclude (folders),
# its subcommands that run the tests once (``vitest`` alone does so under CI=1), the ones
# that do something else, and its options that take a value.
_VITEST_SPEC_FILE = re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$")
_VITEST_EXCLUDED_DIRS = frozenset({"node_modules", "dist", "cypress", ".git", ".idea", ".cache", ".output", ".temp"})
_VITEST_RUN_COMMANDS = frozenset({"run", "watch", "dev"})
_VITEST_OTHER_COMMANDS = frozenset({"bench", "related", "typecheck", "list", "init"})
_VITEST_OTHER_MODES = ("--typecheck", "--browser", "--changed", "--related")
_VITEST_VALUE_OPTIONS = frozenset(
    {
        "-c",
        "--config",
        "-r",
        "--root",
        "--dir",
        "--reporter",
        "--outputFile",
        "--pool",
        "-t",
        "--testNamePattern",
        "--environment",
        "--project",
        "--shard",
        "--maxWorkers",
        "--minWorkers",
        "--mode",
        "--testTimeout",
        "--hookTimeout",
        "--bail",
        "--retry",
        "--sequence.seed",
        "--exclude",
        "--maxConcurrency",
    }
)
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


def _node_test_file(name: str, files: dict[str, str], run: list[str] | None = None) -> str | None:
    """The one test file declaring ``name`` (among the files the check ``run``s, when
    known); a nested name (``suite > test``) needs every part (the ``describe`` names and
    the test's own) declared in that file."""

    def declares(text: str, part: str) -> bool:
        return any(quoted in text for quoted in (f'"{part}"', f"'{part}'", f"`{part}`"))

    parts = name.split(" > ")
    matches = [
        path
        for path, text in sorted(files.items())
        if (path in run if run is not None else JS_RUNNER_DEFAULT_TEST_FILE.search(path))
        and all(declares(text, part) for part in parts)
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


def _mocha_runner(candidate: RepairCandidate) -> bool:
    check = candidate.check
    if check.tool == "mocha":
        return True
    return check.tool == "npm" and bool(check.script_body and _MOCHA_SCRIPT.match(check.script_body))


def _vitest_runner(candidate: RepairCandidate) -> bool:
    check = candidate.check
    if check.tool == "vitest":
        return True
    return check.tool == "npm" and bool(check.script_body and _VITEST_SCRIPT.match(check.script_body))


def _runner_words(candidate: RepairCandidate, runner: str) -> list[str]:
    """The words after the runner's name in the recorded command (or its npm script)."""
    check = candidate.check
    words = shlex.split(check.script_body or "") if check.tool == "npm" else list(check.argv)
    names = [posixpath.basename(word) for word in words]  # ./node_modules/.bin/<runner> too
    return words[names.index(runner) + 1 :] if runner in names else words


def _positional_words(words: list[str], value_options: frozenset[str]) -> list[str]:
    """The words that are not options or the values of ``value_options``."""
    positional: list[str] = []
    skip_value = False
    for word in words:
        if skip_value:
            skip_value = False
        elif word.startswith("-"):
            skip_value = word in value_options
        else:
            positional.append(word)
    return positional


def _vitest_files(candidate: RepairCandidate) -> list[str]:
    """The files the recorded vitest command runs: the project's test files under the
    check's folder that vitest's default patterns find, those whose path (from the check's
    folder) holds one of the command's filters when it has any, as vitest matches them
    (case aside)."""
    words = _runner_words(candidate, "vitest")
    if words[:1] and words[0] in _VITEST_RUN_COMMANDS:
        words = words[1:]
    if (words[:1] and words[0] in _VITEST_OTHER_COMMANDS) or any(
        word.startswith(_VITEST_OTHER_MODES) for word in words
    ):
        raise UnverifiableCheck(f"`{shlex.join(words)}`: not a vitest run of the project's tests")
    filters = [word.removeprefix("./").lower() for word in _positional_words(words, _VITEST_VALUE_OPTIONS)]
    prefix = f"{candidate.cwd}/" if candidate.cwd else ""
    found = []
    # Only test files: the verifier restores them from the pristine image.
    for path in candidate.start_files:
        inner = path[len(prefix) :]
        if not path.startswith(prefix) or not _VITEST_SPEC_FILE.search(path) or not is_test_path(path):
            continue
        if _VITEST_EXCLUDED_DIRS & set(PurePosixPath(inner).parts[:-1]):
            continue
        if not filters or any(fragment in inner.lower() for fragment in filters):
            found.append(path)
    return sorted(found)


def _vitest_test_id(candidate: RepairCandidate, name: str) -> str | None:
    """``<file> > <suite> > <test>`` (the file from the check's folder) as the verifier's id;
    a name without its file (vitest's ``×`` lines) is found in the one test file declaring it."""
    file, _, rest = name.partition(" > ")
    path = _within_check_dir(candidate, [file])[0]
    if rest and path in candidate.start_files:
        return f"{path}::{rest}"
    located = _node_test_file(name, candidate.start_files, _vitest_files(candidate))
    return f"{located}::{name}" if located else None


def _mocha_files(candidate: RepairCandidate) -> list[str]:
    """The files the recorded mocha command runs: its file targets, the files of its folder
    targets (``--recursive``: and below), else mocha's default ``test/*.{js,cjs,mjs}``."""
    words = _runner_words(candidate, "mocha")
    targets = _positional_words(words, _MOCHA_VALUE_OPTIONS)
    recursive = "--recursive" in words
    files = candidate.start_files

    def in_folder(folder: str) -> list[str]:
        prefix = f"{folder.rstrip('/')}/"
        return [
            path
            for path in files
            if path.startswith(prefix)
            and _MOCHA_SPEC_FILE.search(path)
            and "node_modules/" not in path
            and (recursive or "/" not in path[len(prefix) :])
        ]

    found: list[str] = []
    for target in _within_check_dir(candidate, targets or [_MOCHA_DEFAULT_SPEC_DIR]):
        found += [target] if target in files else in_folder(target)
    # Only test files: the verifier restores them from the pristine image.
    return sorted({path for path in found if is_test_path(path)})


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
        path
        for path in files
        if path.startswith(prefix) and "node_modules/" not in path and JS_RUNNER_DEFAULT_TEST_FILE.search(path)
    )


# Flags that make a lint run change files, never fail or keep a cache: the verifier's run reports only.
_LINT_DROPPED_FLAGS = frozenset(
    {
        "--fix",
        "--unsafe-fixes",
        "--watch",
        "-w",
        "--show-fixes",
        "--diff",
        "--fix-dry-run",
        "--cache",
        "--incremental",
        "--write",
        "--apply",
        "--apply-unsafe",
        "--unsafe",
    }
)
# Node's lint and type checks run with Debian's build of the tool (``node-typescript`` is
# tsc 4.9, ``eslint`` 6.4), by absolute path so nothing in the project stands in for it;
# python3 runs the verifier's tamper check and verdict. Biome has no Debian package: it
# runs as the project installed it (``npm ci`` at build time, which needs the npm
# registry; the verifier restores the image's node_modules, so the submission's never run).
# esbuild is Debian's Go build (0.17): it resolves and parses the code and runs none of it.
NODE_LINT_TOOLS: dict[str, tuple[str, list[str]]] = {
    "tsc": ("/usr/bin/tsc", ["node-typescript", "python3"]),
    "eslint": ("/usr/bin/eslint", ["eslint", "python3"]),
    "esbuild": ("/usr/bin/esbuild", ["esbuild", "python3"]),
    "biome": ("node_modules/.bin/biome", ["python3"]),
}


def _lint_command(candidate: RepairCandidate) -> list[str]:
    """The recorded check's words as the verifier runs them, with the image's own tool:
    ``python3 -I -m`` for ruff and mypy, Debian's binary for tsc, eslint and esbuild, the
    project's installed biome."""
    check = candidate.check
    tool = lint_tool(candidate)
    assert tool is not None  # a lint check
    argv = shlex.split(check.script_body) if check.tool == "npm" and check.script_body else check.argv
    names = [posixpath.basename(word) for word in argv]
    start = names.index(tool) + 1 if tool in names else None
    builds = tool == "tsc" and bool({"--build", "-b"} & set(argv))  # project references: not one check
    if start is None or "--exit-zero" in argv or "--fix-only" in argv or builds:
        raise UnverifiableCheck(f"`{shlex.join(argv)}`: not a {tool} run the verifier can repeat")
    program = [NODE_LINT_TOOLS[tool][0]] if tool in NODE_LINT_TOOLS else ["python3", "-I", "-m", tool]
    return [*program, *(word for word in argv[start:] if word not in _LINT_DROPPED_FLAGS)]


def diagnostic_ids(candidate: RepairCandidate, diagnostics: list[str]) -> list[str]:
    """Lint diagnostics (``file: RULE message``) named from the project root. eslint names
    files by absolute path (the session's machine, or ``/workspace`` in the image): such a
    path becomes the longest project file it ends with; a relative one is joined to the
    check's directory."""
    files = sorted(candidate.start_files, key=len, reverse=True)
    named = []
    for diagnostic in diagnostics:
        path, rest = diagnostic.split(": ", 1)
        if posixpath.isabs(path):
            path = next((file for file in files if path.endswith("/" + file)), path)
        elif candidate.cwd:
            path = posixpath.normpath(posixpath.join(candidate.cwd, path))
        named.append(f"{path}: {rest}")
    return named


def _lint_spec(candidate: RepairCandidate) -> VerifierSpec:
    if not candidate.failing_ids:
        raise UnverifiableCheck(f"{lint_tool(candidate)} check: the failing run printed no diagnostics")
    return VerifierSpec(
        runner="lint",
        tracked_test_ids=diagnostic_ids(candidate, candidate.failing_ids),
        run_targets=[candidate.cwd or "."],
        reward="check",
        check_command=_lint_command(candidate),
        check_dir=candidate.cwd,
    )


def verifier_test_ids(candidate: RepairCandidate, failing_ids: list[str]) -> list[str | None]:
    """Each of the check's failing ids as the verifier's id (``<project file>::<name>``), or
    None where it names no test of the project the agent starts with."""
    files = candidate.start_files
    tool = candidate.check.tool
    if tool == "pytest":
        # A test file that failed to import is tracked whole (``ERROR tests/test_x.py``).
        ids = _within_check_dir(candidate, failing_ids) if failing_ids else []
        return [
            test_id if "::" in test_id or (test_id.endswith(".py") and test_id in files) else None for test_id in ids
        ]
    if tool == "unittest":
        return [_unittest_to_pytest(test_id, set(files)) for test_id in failing_ids]
    if _vitest_runner(candidate):
        return [_vitest_test_id(candidate, name) for name in failing_ids]
    if _node_test_runner(candidate) or _jest_runner(candidate) or _mocha_runner(candidate):
        # jest names a failure "suite › test" (parsed as "suite > test"), mocha by its
        # nested titles, as node:test does; mocha's are among the files it ran.
        run = _mocha_files(candidate) if _mocha_runner(candidate) else None
        located = [(_node_test_file(name, files, run), name) for name in failing_ids]
        return [f"{path}::{name}" if path else None for path, name in located]
    return [None for _ in failing_ids]


def tracked_test_spec(candidate: RepairCandidate, failing_ids: list[str] | None = None) -> VerifierSpec:
    """The verifier runs the recorded check's tests; every one must pass and the failures
    (``failing_ids``, by default the recorded ones) must be among them (reward mode ``check``)."""
    files = candidate.start_files
    tool = candidate.check.tool
    if lint_tool(candidate) is not None:
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
        known = cast("list[str]", tracked)  # all(tracked): no id is missing
        if tool in ("pytest", "unittest"):
            python_targets = _within_check_dir(candidate, candidate.check.targets if tool == "pytest" else [])
            # The root is always on the verifier's sys.path; the recorded check's other import paths are added.
            import_paths = [path for path in candidate.check.import_paths if path != "."]
            return VerifierSpec(
                runner="pytest",
                tracked_test_ids=known,
                pytest_config=pytest_config_path(files, candidate.cwd),
                run_targets=python_targets,
                config_paths=restored,
                reward="check",
                import_paths=import_paths,
            )
        if _vitest_runner(candidate):
            return VerifierSpec(
                runner="vitest",
                tracked_test_ids=known,
                run_targets=_vitest_files(candidate),
                config_paths=restored,
                reward="check",
                check_dir=candidate.cwd,
            )
        if _mocha_runner(candidate):
            return VerifierSpec(
                runner="mocha",
                tracked_test_ids=known,
                run_targets=_mocha_files(candidate),
                config_paths=restored,
                reward="check",
            )
        return VerifierSpec(
            runner="jest" if _jest_runner(candidate) else "node",
            tracked_test_ids=known,
            run_targets=_node_test_files(candidate),
            config_paths=restored,
            reward="check",
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
    moment = trajectory_time(candidate.timestamp)
    lines: list[str] = (
        [_DEBIAN_JEST] if _jest_runner(candidate) else [_DEBIAN_MOCHA] if _mocha_runner(candidate) else []
    )
    if (node_lint := lint_tool(candidate)) in NODE_LINT_TOOLS:
        binary, packages = NODE_LINT_TOOLS[node_lint]
        present = f"test -x {binary} && command -v python3" if posixpath.isabs(binary) else "command -v python3"
        lines.append(_debian_install(present, packages))
    package_dir = candidate.cwd
    manifest = posixpath.join(package_dir, "package.json") if package_dir else "package.json"
    try:
        package = json.loads(files.get(manifest, "{}"))
    except ValueError:
        package = {}
    if not isinstance(package, dict):
        package = {}
    declared = [
        name
        for key in ("dependencies", "devDependencies")
        if isinstance(sections := package.get(key), dict)
        for name in sections
    ]
    if _vitest_runner(candidate) and "vitest" not in declared:
        # The verifier runs vitest as the project installed it (no Debian package has it).
        raise DependenciesNotInstallable(
            f"`{candidate.check.command.strip()}`: {manifest} does not declare vitest, which the verifier runs "
            "as the project installs it"
        )
    if isinstance(package, dict) and (package.get("dependencies") or package.get("devDependencies")):
        lock = posixpath.join(package_dir, "package-lock.json") if package_dir else "package-lock.json"
        before = f" --before={moment}" if moment else ""
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
        tags=[
            candidate.check.tool,
            candidate.check.kind,
            *(["no-assertion-controls"] if tests.runner == "lint" else []),
        ],
        tests_changed_by_fix=candidate.test_paths,
    )

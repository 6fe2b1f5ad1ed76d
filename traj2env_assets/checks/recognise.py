"""Recognise a shell command as a check (tests, type check, lint, build).

``recognise_check(command, snapshot, cwd="")`` returns a :class:`CheckCommand` or
None. ``snapshot`` is the project files before the command (``ReplayRecord.files_before``),
used to resolve ``npm test`` / ``npm run <script>`` from ``package.json``; ``cwd`` is
the command's directory relative to the project root (``ShellCommand.cwd``). A
leading ``cd <dir> &&`` is followed. An npm script that package.json lacks is not a
check; without package.json, a script is a check when its name says so (test*,
check*, lint*, typecheck, build*).

What the recorded command implies about how the check ran is kept as data, so the image
can run it the same way: the directory it ran in (``cwd``, after ``cd``) and the
directories its Python process had on ``sys.path`` (``import_paths``): ``PYTHONPATH``
entries set before it (``PYTHONPATH=. pytest``, ``env``/``export``, PowerShell's
``$env:PYTHONPATH=``, cmd's ``set``), its own directory for ``python -m pytest`` (not for
the ``pytest`` script), and the project itself for ``uv run``/``poetry run``/``pdm run``/
``hatch run`` (which install it into their environment). Only directories inside the
project are kept; nothing else from the recorded environment is.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, Field

from traj2env_assets.replay.npm import package_scripts
from traj2env_assets.replay.shell_syntax import SimpleCommand, parse_shell

CheckTool = Literal[
    "pytest",
    "unittest",
    "npm",
    "node-test",
    "tsc",
    "eslint",
    "biome",
    "ruff",
    "mypy",
    "jest",
    "vitest",
    "mocha",
    "esbuild",
]
CheckKind = Literal["tests", "typecheck", "lint", "build"]

_KIND: dict[str, CheckKind] = {
    "pytest": "tests",
    "unittest": "tests",
    "node-test": "tests",
    "jest": "tests",
    "vitest": "tests",
    "mocha": "tests",
    "tsc": "typecheck",
    "mypy": "typecheck",
    "eslint": "lint",
    "biome": "lint",
    "ruff": "lint",
    "esbuild": "build",
}
_JS_TEST_RUNNERS: dict[str, CheckTool] = {"jest": "jest", "vitest": "vitest", "mocha": "mocha"}
_NPM_CLIENTS = frozenset({"npm", "pnpm", "yarn", "bun"})
_CHECK_SCRIPT_NAME = re.compile(r"^(test|check|lint|typecheck|type-check|types|tsc|verify|ci|build)([:\-_].*)?$")
_PYTEST_VALUE_OPTIONS = frozenset(
    {"-k", "-m", "-c", "-p", "-o", "--maxfail", "--rootdir", "--deselect", "--ignore", "--tb", "-n", "--durations"}
)
_WRAPPER_WORDS = frozenset({"sudo", "time", "nohup", "command", "exec", "env"})
# Runners that install the project itself into the environment they run the check in.
_PROJECT_RUNNERS = frozenset({"uv", "poetry", "pdm", "hatch"})
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
_POWERSHELL_ASSIGNMENT = re.compile(r"^\$env:([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL | re.IGNORECASE)
_PYTHON = re.compile(r"^(?:python(?:3(?:\.\d+)?)?|py)(?:\.exe)?$", re.IGNORECASE)
# The working directory as a shell or PowerShell spells it inside a PYTHONPATH value.
_CWD_SPELLINGS = re.compile(r"\$\{?PWD\}?|\$\(pwd\)|`pwd`|\$pwd|\$PSScriptRoot|%CD%", re.IGNORECASE)
# A Windows spelling: backslashes there separate path parts (``tests\test_x.py``).
_WINDOWS_HINT = re.compile(
    r"\$env:|(?:^|[;&]\s*)set\s+\w+=|(?:^|\s)py(?:\.exe)?\s+-m\b|\.exe\b|\b[A-Za-z]:\\|\w\\[\w.\\]+\.py\b",
    re.IGNORECASE,
)
_PATH_BACKSLASH = re.compile(r"(?<=[\w.])\\(?=[\w.])")


class CheckCommand(BaseModel):
    command: str
    """The whole shell command as recorded."""
    tool: CheckTool
    kind: CheckKind
    language: Literal["python", "node"]
    argv: list[str]
    """The words of the check itself (after ``cd``, ``uv run``, ``npx`` ...)."""
    targets: list[str] = Field(default_factory=list)
    """Selected test paths or node ids, when given."""
    script: str | None = None
    """For ``npm``: the script name; ``script_body`` is its text from package.json."""
    script_body: str | None = None
    inner_tools: list[CheckTool] = Field(default_factory=list)
    """Checks found inside an npm script body."""
    piped: bool = False
    """The check's output went into a pipe (``| tail``): the recorded exit code is the
    last pipeline command's, not the check's."""
    cwd: str = ""
    """The directory the check ran in, relative to the project root ("" = the root),
    after any ``cd`` before it."""
    import_paths: list[str] = Field(default_factory=list)
    """Python checks: project directories (relative to the root, "." = the root) the
    check's process had on ``sys.path`` beyond what pytest adds itself, in order."""


class _Prefix(BaseModel):
    """What the words before the check's own name say about how it runs."""

    argv: list[str]
    env: dict[str, str] = Field(default_factory=dict)
    project_runner: bool = False


def _strip_prefix(argv: list[str]) -> _Prefix:
    index = 0
    env: dict[str, str] = {}
    project_runner = False
    while index < len(argv):
        word = argv[index]
        assignment = _ASSIGNMENT.match(word)
        if assignment:
            env[assignment.group(1)] = assignment.group(2)
            index += 1
        elif word in _WRAPPER_WORDS:
            index += 1
            while word == "env" and index < len(argv) and argv[index].startswith("-"):
                index += 1
        elif word in ("npx", "bunx", "pnpx"):
            index += 1
            while index < len(argv) and argv[index].startswith("-"):
                index += 1
        elif word == "timeout":
            index += 1
            while index < len(argv) and argv[index].startswith("-"):
                index += 1
            index += 1  # the duration
        elif word in (*_PROJECT_RUNNERS, "pipenv") and argv[index + 1 : index + 2] == ["run"]:
            project_runner = project_runner or word in _PROJECT_RUNNERS
            index += 2
            while index < len(argv) and argv[index].startswith("-"):
                index += 2 if argv[index] in ("--with", "--python", "-p", "--env") else 1
        else:
            break
    return _Prefix(argv=argv[index:], env=env, project_runner=project_runner)


def _exported(argv: list[str]) -> dict[str, str]:
    """Variables a command sets for the commands after it: ``export X=..``, cmd's
    ``set X=..``, PowerShell's ``$env:X=..``."""
    if argv and argv[0] in ("export", "set"):
        return {m.group(1): m.group(2) for word in argv[1:] if (m := _ASSIGNMENT.match(word))}
    if len(argv) == 1 and (m := _POWERSHELL_ASSIGNMENT.match(argv[0])):
        return {m.group(1): m.group(2)}
    return {}


def _inside(directory: str, entry: str, root: str | None) -> str | None:
    """``entry`` (relative to ``directory``, or absolute) relative to the project root;
    None when it leaves the project or cannot be known."""
    entry = _CWD_SPELLINGS.sub(".", entry.strip().strip("'\"")).replace("\\", "/")
    if not entry or "$" in entry or "%" in entry or entry.startswith("~"):
        return None
    if entry.startswith("/") or re.match(r"^[A-Za-z]:/", entry):
        if not root or re.match(r"^[A-Za-z]:/", entry):
            return None
        relative = posixpath.relpath(posixpath.normpath(entry), root.rstrip("/") or "/")
    else:
        relative = posixpath.normpath(posixpath.join(directory or ".", entry))
    return None if relative == ".." or relative.startswith("../") else relative


def _pythonpath_entries(value: str, directory: str, root: str | None) -> list[str]:
    separator = ";" if ";" in value or re.search(r"(?:^|;)[A-Za-z]:[\\/]", value) else ":"
    entries = [_inside(directory, part, root) for part in value.split(separator) if part.strip()]
    return [entry for entry in entries if entry is not None]


def _project_import_root(snapshot: Mapping[str, str], directory: str) -> str:
    """Where ``uv run``/``poetry run`` import the project from: the folder of the nearest
    pyproject.toml (its ``src/`` for a src layout), else the check's directory."""
    current = directory
    while True:
        if posixpath.join(current, "pyproject.toml") in snapshot:
            src = posixpath.join(current, "src") if current else "src"
            if any(path.startswith(src + "/") and path.endswith("/__init__.py") for path in snapshot):
                return src
            return current or "."
        if not current:
            return directory or "."
        current = posixpath.dirname(current)


def _python_flags(args: list[str]) -> set[str]:
    """The interpreter's single-letter flags before ``-m`` (``-I``, ``-P``, ``-E``...)."""
    flags: set[str] = set()
    for arg in args:
        if arg == "-m" or not arg.startswith("-") or arg.startswith("--"):
            break
        flags.update(arg[1:])
    return flags


def _import_paths(
    prefix: _Prefix, exported: dict[str, str], snapshot: Mapping[str, str], directory: str, root: str | None
) -> list[str]:
    argv = prefix.argv
    flags = _python_flags(argv[1:]) if _PYTHON.match(posixpath.basename(argv[0])) else set()
    paths: list[str] = []
    # ``python -m`` puts the working directory first on sys.path (not with -I or -P).
    if _PYTHON.match(posixpath.basename(argv[0])) and not flags & {"I", "P"}:
        paths.append(directory or ".")
    pythonpath = prefix.env.get("PYTHONPATH", exported.get("PYTHONPATH"))
    if pythonpath is not None and not flags & {"I", "E"}:
        paths += _pythonpath_entries(pythonpath, directory, root)
    if prefix.project_runner:
        paths.append(_project_import_root(snapshot, directory))
    return list(dict.fromkeys(paths))


def _pytest_targets(args: list[str]) -> list[str]:
    targets: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _PYTEST_VALUE_OPTIONS:
            skip = True
        elif not arg.startswith("-"):
            targets.append(arg)
    return targets


def _package_scripts(snapshot: Mapping[str, str], directory: str) -> dict[str, str] | None:
    return package_scripts(snapshot.get(posixpath.join(directory, "package.json")))


def _npm_script(argv: list[str]) -> str | None:
    client, rest = argv[0], [a for a in argv[1:] if not a.startswith("-")]
    if not rest:
        return None
    if rest[0] in ("test", "t", "tst"):
        return "test"
    if rest[0] in ("run", "run-script") and len(rest) > 1:
        return rest[1]
    if client in ("yarn", "pnpm", "bun") and rest[0] not in ("install", "add", "remove", "exec", "dlx", "x"):
        return rest[0]
    return None


def _recognise_simple(
    argv: list[str],
    command: str,
    snapshot: Mapping[str, str],
    directory: str,
    depth: int,
    exported: dict[str, str] | None = None,
    root: str | None = None,
) -> CheckCommand | None:
    prefix = _strip_prefix(argv)
    argv = prefix.argv
    if not argv:
        return None
    name = posixpath.basename(argv[0])
    name = name[:-4] if name.lower().endswith(".exe") else name
    args = argv[1:]
    tool: CheckTool | None = None
    targets: list[str] = []
    module_args = args[args.index("-m") :] if "-m" in args and _PYTHON.match(name) else []
    if name in ("pytest", "py.test"):
        tool, targets = "pytest", _pytest_targets(args)
    elif len(module_args) > 1 and all(a.startswith("-") for a in args[: args.index("-m")]):
        module = module_args[1]
        if module == "pytest":
            tool, targets = "pytest", _pytest_targets(module_args[2:])
        elif module == "unittest":
            tool, targets = "unittest", [a for a in module_args[2:] if not a.startswith("-")]
        elif module == "mypy":
            tool = "mypy"
        elif module == "ruff" and "check" in module_args:
            tool = "ruff"
    elif name == "node" and "--test" in args:
        tool, targets = "node-test", [a for a in args if not a.startswith("-")]
    elif name in ("tsc", "tsgo", "vue-tsc"):
        tool = "tsc"
    elif name == "eslint":
        tool = "eslint"
    elif name == "esbuild" and not {"--serve", "--watch"} & {arg.split("=")[0] for arg in args}:
        tool = "esbuild"  # a build that ends (a server or watcher never does)
    elif name == "biome" and args[:1] and args[0] in ("check", "lint", "ci"):
        tool = "biome"
    elif name == "ruff" and args[:1] == ["check"]:
        tool = "ruff"
    elif name in ("mypy", "dmypy"):
        tool = "mypy"
    elif name in _JS_TEST_RUNNERS:
        tool = _JS_TEST_RUNNERS[name]
        targets = [a for a in args if not a.startswith("-") and a != "run"]
    elif name in _NPM_CLIENTS:
        return _recognise_npm(argv, command, snapshot, directory, depth)
    if tool is None:
        return None
    language: Literal["python", "node"] = "python" if tool in ("pytest", "unittest", "ruff", "mypy") else "node"
    return CheckCommand(
        command=command,
        tool=tool,
        kind=_KIND[tool],
        language=language,
        argv=argv,
        targets=targets,
        cwd=directory,
        import_paths=_import_paths(prefix, exported or {}, snapshot, directory, root) if language == "python" else [],
    )


def _recognise_npm(
    argv: list[str], command: str, snapshot: Mapping[str, str], directory: str, depth: int
) -> CheckCommand | None:
    script = _npm_script(argv)
    if script is None:
        return None
    scripts = _package_scripts(snapshot, directory)
    body = scripts.get(script) if scripts is not None else None
    inner: list[CheckTool] = []
    if body is not None and depth < 3:
        inner = [found.tool for found in _recognise_all(body, snapshot, directory, depth + 1)]
    if not inner and not _CHECK_SCRIPT_NAME.match(script):
        return None
    if scripts is not None and body is None:
        return None  # the script does not exist: npm fails without running a check
    kinds = {_KIND[t] for t in inner if t in _KIND}
    if script.startswith("build"):
        kind: CheckKind = "build"
    elif "tests" in kinds or script in ("test", "t") or script.startswith("test"):
        kind = "tests"
    elif kinds == {"lint"}:
        kind = "lint"
    elif "typecheck" in kinds:
        kind = "typecheck"
    else:
        kind = "lint" if script.startswith("lint") else "typecheck" if "type" in script else "tests"
    return CheckCommand(
        command=command,
        tool="npm",
        kind=kind,
        language="node",
        argv=argv,
        script=script,
        script_body=body,
        inner_tools=inner,
        cwd=directory,
    )


def _recognise_all(
    text: str, snapshot: Mapping[str, str], directory: str, depth: int, root: str | None = None
) -> list[CheckCommand]:
    found: list[CheckCommand] = []
    exported: dict[str, str] = {}
    commands = parse_shell(_posix_paths(text)).commands
    for index, simple in enumerate(commands):
        if simple.words and simple.words[0].text in ("cd", "Set-Location", "pushd") and len(simple.words) > 1:
            directory = _cd(directory, simple.words[-1].text, root)
            continue
        if set_here := _exported(simple.argv):
            exported.update(set_here)
            continue
        check = _recognise_simple(simple.argv, text, snapshot, directory, depth, exported, root)
        if check is not None:
            check.piped = _output_piped(commands, index)
            found.append(check)
    return found


def _posix_paths(text: str) -> str:
    """A Windows command's backslash-separated paths with forward slashes."""
    return _PATH_BACKSLASH.sub("/", text) if _WINDOWS_HINT.search(text) else text


def _output_piped(commands: list[SimpleCommand], index: int) -> bool:
    return index + 1 < len(commands) and commands[index + 1].connector == "|"


def _cd(directory: str, target: str, root: str | None) -> str:
    if root and target.startswith("/"):
        relative = posixpath.relpath(posixpath.normpath(target), root.rstrip("/") or "/")
        return directory if relative.startswith("..") else ("" if relative == "." else relative)
    if target.startswith(("/", "~")) or "$" in target:
        return directory
    joined = posixpath.normpath(posixpath.join(directory or ".", target))
    return "" if joined == "." else joined


def recognise_check(
    command: str, snapshot: Mapping[str, str], cwd: str = "", project_root: str | None = None
) -> CheckCommand | None:
    """The first check ``command`` runs, or None if it runs none. ``project_root``
    (``record.record.project_root``) lets an absolute ``cd`` inside the project count."""
    found = _recognise_all(command, snapshot, cwd or "", 0, project_root)
    return found[0] if found else None


def image_argv(check: CheckCommand) -> list[str]:
    """The check's words as the image runs them: a Python launcher the image may lack
    (``py``, ``python3.11``, ``python.exe``) becomes ``python3``, with the same flags."""
    name = posixpath.basename(check.argv[0]) if check.argv else ""
    if _PYTHON.match(name):
        return ["python3", *check.argv[1:]]
    return list(check.argv)


def image_pythonpath(check: CheckCommand, project_root: str) -> str | None:
    """The ``PYTHONPATH`` that gives the check in the image the import paths it had in
    the session (absolute, under ``project_root``); None when it had none."""
    paths = [posixpath.normpath(posixpath.join(project_root, path)) for path in check.import_paths]
    return ":".join(paths) if paths else None

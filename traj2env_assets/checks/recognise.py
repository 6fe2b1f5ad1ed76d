"""Recognise a shell command as a check (tests, type check, lint, build).

``recognise_check(command, snapshot, cwd="")`` returns a :class:`CheckCommand` or
None. ``snapshot`` is the project files before the command (``ReplayRecord.files_before``),
used to resolve ``npm test`` / ``npm run <script>`` from ``package.json``; ``cwd`` is
the command's directory relative to the project root (``ShellCommand.cwd``). A
leading ``cd <dir> &&`` is followed. An npm script that package.json lacks is not a
check; without package.json, a script is a check when its name says so (test*,
check*, lint*, typecheck, build*).
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
    "pytest", "unittest", "npm", "node-test", "tsc", "eslint", "biome", "ruff", "mypy", "jest", "vitest", "mocha"
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
}
_JS_TEST_RUNNERS: dict[str, CheckTool] = {"jest": "jest", "vitest": "vitest", "mocha": "mocha"}
_NPM_CLIENTS = frozenset({"npm", "pnpm", "yarn", "bun"})
_CHECK_SCRIPT_NAME = re.compile(r"^(test|check|lint|typecheck|type-check|types|tsc|verify|ci|build)([:\-_].*)?$")
_PYTEST_VALUE_OPTIONS = frozenset(
    {"-k", "-m", "-c", "-p", "-o", "--maxfail", "--rootdir", "--deselect", "--ignore", "--tb", "-n", "--durations"}
)
_WRAPPER_WORDS = frozenset({"sudo", "time", "nohup", "command", "exec"})


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


def _strip_prefix(argv: list[str]) -> list[str]:
    index = 0
    while index < len(argv):
        word = argv[index]
        if word in _WRAPPER_WORDS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            index += 1
        elif word in ("npx", "bunx", "pnpx"):
            index += 1
            while index < len(argv) and argv[index].startswith("-"):
                index += 1
        elif word in ("uv", "poetry", "pdm", "hatch", "pipenv") and argv[index + 1 : index + 2] == ["run"]:
            index += 2
            while index < len(argv) and argv[index].startswith("-"):
                index += 2 if argv[index] in ("--with", "--python", "-p", "--env") else 1
        else:
            break
    return argv[index:]


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
    argv: list[str], command: str, snapshot: Mapping[str, str], directory: str, depth: int
) -> CheckCommand | None:
    argv = _strip_prefix(argv)
    if not argv:
        return None
    name = posixpath.basename(argv[0])
    args = argv[1:]
    tool: CheckTool | None = None
    targets: list[str] = []
    if name in ("pytest", "py.test"):
        tool, targets = "pytest", _pytest_targets(args)
    elif re.fullmatch(r"python(3(\.\d+)?)?", name) and args[:1] == ["-m"] and len(args) > 1:
        module = args[1]
        if module == "pytest":
            tool, targets = "pytest", _pytest_targets(args[2:])
        elif module == "unittest":
            tool, targets = "unittest", [a for a in args[2:] if not a.startswith("-")]
        elif module == "mypy":
            tool = "mypy"
        elif module == "ruff" and "check" in args:
            tool = "ruff"
    elif name == "node" and "--test" in args:
        tool, targets = "node-test", [a for a in args if not a.startswith("-")]
    elif name in ("tsc", "tsgo", "vue-tsc"):
        tool = "tsc"
    elif name == "eslint":
        tool = "eslint"
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
    return CheckCommand(
        command=command,
        tool=tool,
        kind=_KIND[tool],
        language="python" if tool in ("pytest", "unittest", "ruff", "mypy") else "node",
        argv=argv,
        targets=targets,
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
    )


def _recognise_all(
    text: str, snapshot: Mapping[str, str], directory: str, depth: int, root: str | None = None
) -> list[CheckCommand]:
    found: list[CheckCommand] = []
    commands = parse_shell(text).commands
    for index, simple in enumerate(commands):
        if simple.words and simple.words[0].text == "cd" and len(simple.words) > 1:
            directory = _cd(directory, simple.words[1].text, root)
            continue
        check = _recognise_simple(simple.argv, text, snapshot, directory, depth)
        if check is not None:
            check.piped = _output_piped(commands, index)
            found.append(check)
    return found


def _output_piped(commands: list[SimpleCommand], index: int) -> bool:
    return index + 1 < len(commands) and commands[index + 1].connector == "|"


def _cd(directory: str, target: str, root: str | None) -> str:
    if root and target.startswith("/"):
        relative = posixpath.relpath(posixpath.normpath(target), root.rstrip("/") or "/")
        return directory if relative.startswith("..") else ("" if relative == "." else relative)
    if target.startswith("/") or target.startswith("~") or "$" in target:
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

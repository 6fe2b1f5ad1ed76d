"""Read a check's recorded output: did it pass, and which tests or locations failed.

``parse_check_result(check, output, exit_code)`` returns a :class:`CheckResult`.
Failing ids, by tool:

- pytest: ``FAILED``/``ERROR`` lines of the short summary (and ``-v`` result lines):
  the node id, e.g. ``tests/test_calc.py::test_add``; a test file that failed to import
  is its path (``ERROR tests/test_calc.py``, or the ``ERROR collecting ...`` header)
- unittest: ``FAIL:``/``ERROR:`` headers: ``module.Class.test_name``
- node --test: TAP ``not ok N - name`` lines or the spec reporter's ``✖ name (time)``
  lines, the innermost failures only, named with their suites (``describe``) joined
  with `` > `` (``calc > division > divides evenly``)
- jest: ``●`` headers (``suite › test`` becomes ``suite > test``); vitest: ``FAIL``/``×``
  lines (``file > suite > test``); mocha: the numbered failure list (``1) suite`` then the
  nested titles, the test's own ending with ``:``), joined with `` > ``
- diagnostics, by file, rule and message without their position (``file: RULE message``):
  tsc ``src/a.ts: TS2322 Type 'string' is not ...``; eslint (stylish) ``file: rule message``;
  biome ``file: lint/group/rule``; esbuild ``file: error message`` (``✘ [ERROR]`` blocks
  with their location, or the older `` > file:1:2: error: message`` lines); ruff (concise
  or full output) ``app.py: F401 `os` imported but unused``; mypy ``app.py: return-value
  Incompatible return value type ...``

npm scripts are parsed with every parser. The outcome needs positive evidence: the
exit code when it belongs to the check (or a trailing ``Command exited with code N``),
otherwise a runner's own summary (failure markers or failing ids for a failure; a
summary with counts and no failures, e.g. ``3 passed``, ``Ran 3 tests ... OK``,
``# pass 3`` / ``# fail 0``, for a pass). Without either (a missing tool result, a
log cut mid-line, a piped run printing nothing) the outcome is ``unknown``.

A run that never ran to its end is evidence of nothing either way, whatever it printed:
killed or timed out (exit 124, 137, 143 or a negative signal code; an agent's "command
timed out after ...", a shell's ``Killed``/``Terminated``), or denied by the agent's
sandbox. Codex's legacy wrapper ``failed in sandbox ... sandbox denied exec error, exit
code: N, stdout: ..., stderr: ...`` is put on every command of its sandbox that exits
non-zero, so it is a denial only when the output says the sandbox stopped something
(operation not permitted, permission denied, read-only file system, landlock, seccomp)
or the runner never printed its closing summary; a complete pytest run inside it is a
run. Such runs are ``unknown`` with ``not_run`` saying why.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from traj2env_assets.checks.recognise import CheckCommand, CheckTool

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PYTEST_SUMMARY_ID = re.compile(r"^(?:FAILED|ERROR) (\S.*?)(?: - .*)?$", re.MULTILINE)
_PYTEST_VERBOSE_ID = re.compile(r"^(\S+::\S+) (?:FAILED|ERROR)\b", re.MULTILINE)
_PYTEST_COLLECT_ERROR = re.compile(r"^_+ ERROR collecting (\S+) _+$", re.MULTILINE)
_PYTEST_FILE_ERROR = re.compile(r"^ERROR (\S+\.py) - ([A-Za-z_][\w.]*)(?::|$| )", re.MULTILINE)
_EXCEPTION_LINE = re.compile(r"^E\s+([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))\b", re.MULTILINE)
_PYTEST_COUNTS = re.compile(r"(\d+) (failed|passed|errors?|skipped|xfailed|xpassed|deselected)")
_UNITTEST = re.compile(r"^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)", re.MULTILINE)
_TAP_NOT_OK = re.compile(r"^( *)not ok \d+ - (.+?)(?: # .*)?$", re.MULTILINE)
_TAP_SUBTEST = re.compile(r"^( *)# Subtest: (.+)$", re.MULTILINE)
_TAP_COUNTS = re.compile(r"^# (pass|fail|skipped|todo|cancelled) (\d+)$", re.MULTILINE)
_SPEC_LINE = re.compile(r"^( *)(\u25b6|\u2716) (.+?)(?: \([\d.]+m?s\))?$", re.MULTILINE)
_SPEC_RECAP = "\u2716 failing tests:"
_JEST_BULLET = re.compile(r"^\s*\u25cf (.+?)$", re.MULTILINE)
_MOCHA_FAILURE = re.compile(r"^( +)\d+\) (.+)$")
_VITEST_FAIL = re.compile(r"^\s*FAIL\s+(\S+ > .+?)$", re.MULTILINE)
_VITEST_CROSS = re.compile(r"^\s*(?:\u00d7|\u2715)\s+(\S+ > .+?)(?:\s+\d+ms)?$", re.MULTILINE)
_BIOME = re.compile(r"^(\S+?):\d+:\d+ ((?:lint|assist|format|parse|syntax)\S*|organizeImports)\b", re.MULTILINE)
_TSC = re.compile(r"^(\S.*?)(?:\(\d+,\d+\)|:\d+:\d+)(?::| -) error (TS\d+): (.*)$", re.MULTILINE)
_ESLINT_FILE = re.compile(r"^(/\S+|[\w.\-/]+\.\w+)$")
_ESLINT_PROBLEM = re.compile(r"^\s+\d+:\d+\s+error\s+(.*?)\s{2,}(\S+)$")
_RUFF = re.compile(r"^(\S+?):\d+:\d+: ([A-Z]+\d+) (?:\[\*\] )?(.*)$", re.MULTILINE)
_RUFF_FULL = re.compile(r"^([A-Z]+\d+) (?:\[\*\] )?(.*)\n\s*--> (\S+?):\d+:\d+", re.MULTILINE)
# esbuild 0.14+: "✘ [ERROR] message [plugin name]", a blank line, "    file:line:col:".
_ESBUILD = re.compile(r"^\u2718 \[ERROR\] (.+?)(?: \[plugin [^\]]+\])?\s*\n\s*\n {4}(\S.*?):\d+:\d+:$", re.MULTILINE)
_ESBUILD_LEGACY = re.compile(r"^ > (\S.*?):\d+:\d+: error: (.*)$", re.MULTILINE)
_MYPY = re.compile(r"^(\S+?):\d+(?::\d+)?: error: (.*?)(?:  \[([\w-]+)\])?$", re.MULTILINE)
_EXITED = re.compile(r"(?:Command exited with code|Process exited with code|Exit code:?) (-?\d+)\s*$")
_FAILURE_MARKERS = re.compile(
    r"^(?:FAILED |ERROR )|\b\d+ failed\b|\b\d+ errors?\b(?! 0)|^FAIL(?:ED)?\b|^not ok |error TS\d+|"
    r"npm ERR!|npm error|\u2716 \d+ problems?|Found \d+ errors?|^(?:FAIL|ERROR): |^\u2718 \[ERROR\]",
    re.MULTILINE,
)
# Runner summaries that say "everything ran and nothing failed" with a count of what ran.
_PASS_SUMMARIES = re.compile(
    r"^Ran [1-9]\d* tests? in [\d.]+s\s*\n+OK\b|"  # unittest
    r"^Tests?:?\s+[1-9]\d* passed\b|"  # jest "Tests: 3 passed, 3 total", vitest "Tests  3 passed (3)"
    r"^\s*[1-9]\d* passing\b|"  # mocha
    r"^(?:#|\u2139) tests [1-9]\d*$|"  # node --test (TAP / spec), failures checked separately
    r"^Checked [1-9]\d* files?\b.*(?:No fixes applied|Fixed \d+ files?)|"  # biome
    r"^All checks passed!$|"  # ruff
    r"^Success: no issues found in [1-9]\d* source files?$|"  # mypy
    r"^Found 0 errors\b|"  # tsc --watch / --build summaries
    r"^\u26a1 Done in \d+m?s$",  # esbuild
    re.MULTILINE,
)

_RUNNER_FAILS = re.compile(r"^(?:#|\u2139) fail [1-9]\d*$", re.MULTILINE)

# Exit codes of a run stopped from outside: timeout(1) and Codex's timeout, SIGKILL, SIGTERM.
_STOPPED_EXIT_CODES = frozenset({124, 137, 143})
_STOPPED = re.compile(
    r"^(?:(?:Error: )?command timed out after\b|Command was (?:killed|aborted)\b|"
    r"(?:\S+: line \d+:\s+)?(?:\d+\s+)?(?:Killed|Terminated)(?:\s|$)|"
    r"exec command rejected by user\b)",
    re.MULTILINE | re.IGNORECASE,
)
SANDBOX_WRAPPER = re.compile(
    r"^failed in sandbox \w+ with execution error: sandbox denied exec error, exit code: -?\d+, stdout: ",
    re.IGNORECASE,
)
"""The head of Codex's legacy sandbox wrapper; its tail is ``, stderr: <stderr>``."""
_SANDBOX_DENIAL = re.compile(
    r"operation not permitted|permission denied|read-only file system|landlock|seccomp", re.IGNORECASE
)
# A runner's closing line: it ran to its end and counted what it ran.
_CLOSING_SUMMARY = re.compile(
    r"\b\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|deselected)\b.* in [\d.]+s\b|"
    r"\bno tests ran in [\d.]+s\b|^Ran \d+ tests? in [\d.]+s$|^Tests?:?\s+.*\d+ total\b|"
    r"^\s*\d+ (?:passing|failing)\b|^(?:#|\u2139) (?:pass|fail) \d+$|^Found \d+ errors?\b|"
    r"\u2716 \d+ problems?|^All checks passed!$|^Success: no issues found\b|^Checked \d+ files?\b|"
    r"^\d+ errors?(?: and \d+ warnings?)?$|^\u26a1 Done in \d+m?s$",
    re.MULTILINE,
)

Outcome = Literal["passed", "failed", "unknown"]


class CheckResult(BaseModel):
    outcome: Outcome
    """``unknown`` when neither an exit code nor a runner summary says how the run ended."""
    exit_code: int | None = None
    """The exit code used; None when pass/fail came from the output alone."""
    failing_ids: list[str] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    """pytest-style counts when printed (failed, passed, errors, skipped ...)."""
    import_errors: dict[str, str] = Field(default_factory=dict)
    """pytest: the exception each test file that failed to import raised, by file id
    (the class name without its module, e.g. ``JSONDecodeError``), when printed."""
    not_run: str | None = None
    """Why the run is no evidence although it printed something (killed, timed out,
    denied); the outcome is then ``unknown``."""

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @property
    def failed(self) -> bool:
        return self.outcome == "failed"


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(item for item in items if item))


def _pytest_ids(text: str) -> list[str]:
    return _unique(
        _PYTEST_SUMMARY_ID.findall(text) + _PYTEST_VERBOSE_ID.findall(text) + _PYTEST_COLLECT_ERROR.findall(text)
    )


def _pytest_import_errors(text: str) -> dict[str, str]:
    """What each test file that failed to import raised: from the short summary's
    ``ERROR file - Type: ...`` lines, else from the first ``E   Type`` line of its
    ``ERROR collecting file`` section."""
    errors: dict[str, str] = {}
    headers = list(_PYTEST_COLLECT_ERROR.finditer(text))
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        if raised := _EXCEPTION_LINE.search(text, header.end(), end):
            errors[header.group(1)] = raised.group(1)
    errors.update(dict(_PYTEST_FILE_ERROR.findall(text)))
    return {path: name.rsplit(".", 1)[-1] for path, name in errors.items()}


def _unittest_ids(text: str) -> list[str]:
    ids = []
    for name, where in _UNITTEST.findall(text):
        ids.append(where if where.endswith("." + name) else f"{where}.{name}")
    return _unique(ids)


def _tap_ids(text: str) -> list[str]:
    # Node's TAP nests subtests by indentation; a failing parent also reports
    # "not ok", so keep only the innermost failures, named by their path.
    events = sorted(
        [(m.start(), len(m.group(1)), "subtest", m.group(2)) for m in _TAP_SUBTEST.finditer(text)]
        + [(m.start(), len(m.group(1)), "not_ok", m.group(2)) for m in _TAP_NOT_OK.finditer(text)]
    )
    stack: list[tuple[int, str]] = []
    failures: list[tuple[int, str]] = []
    for _, indent, kind, name in events:
        while stack and stack[-1][0] >= indent and kind == "subtest":
            stack.pop()
        if kind == "subtest":
            stack.append((indent, name))
            continue
        path = [n for i, n in stack if i < indent]
        failures.append((indent, " > ".join([*path, name])))
    leaves = [f for f in failures if not any(other[1].startswith(f[1] + " > ") for other in failures)]
    return _unique([name for _, name in leaves])


def _spec_ids(text: str) -> list[str]:
    # Node's spec reporter: "▶ suite" opens a suite, "✖ name (1.2ms)" is a failure, nested
    # by indentation; a suite's own "✖ suite (time)" closes it. The "failing tests:" recap
    # repeats the leaves without their suites, so reading stops there.
    text = text.split(_SPEC_RECAP, 1)[0]
    suites: list[tuple[int, str]] = []
    failures: list[str] = []
    for match in _SPEC_LINE.finditer(text):
        indent, marker, name = len(match.group(1)), match.group(2), match.group(3)
        while suites and suites[-1][0] > indent:
            suites.pop()
        if marker == "\u25b6":
            if not match.group(0).endswith(")"):
                suites.append((indent, name))
            elif suites and suites[-1] == (indent, name):
                suites.pop()
            continue
        if suites and suites[-1] == (indent, name):
            suites.pop()  # a failed suite's closing line, not a test
            continue
        failures.append(" > ".join([n for i, n in suites if i < indent] + [name]))
    return _unique(failures)


def _node_test_ids(text: str) -> list[str]:
    return _unique(_tap_ids(text) + _spec_ids(text))


def _jest_ids(text: str) -> list[str]:
    # jest names a failure "suite › test" (its "●" headers); vitest "file > suite > test".
    bullets = [b.replace(" \u203a ", " > ") for b in _JEST_BULLET.findall(text) if not b.startswith("Console")]
    # vitest's "FAIL file > ..." headers name the file; its tree's "×" lines may not.
    return _unique(bullets + (_VITEST_FAIL.findall(text) or _VITEST_CROSS.findall(text)))


def _mocha_ids(text: str) -> list[str]:
    # Mocha's spec reporter lists each failure after the summary as "  1) suite" followed
    # by one deeper-indented line per nested title, the test's own ending with ":".
    ids: list[str] = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        header = _MOCHA_FAILURE.match(line)
        if not header or header.group(2).endswith(("passing", "failing")):
            continue
        titles = [header.group(2)]
        indent = len(header.group(1))
        for following in lines[index + 1 :]:
            if titles[-1].endswith(":"):
                break
            depth = len(following) - len(following.lstrip(" "))
            if not following.strip() or depth <= indent:
                break
            titles.append(following.strip())
        if titles[-1].endswith(":"):
            ids.append(" > ".join([*titles[:-1], titles[-1][:-1]]))
    return _unique(ids)


# Diagnostics are named by file, rule and message, without their position: "the same
# error" may move when lines are added above it.
def _diagnostic(path: str, rule: str, message: str = "") -> str:
    return f"{path}: {rule} {message.strip()}".rstrip()


def _tsc_ids(text: str) -> list[str]:
    return _unique([_diagnostic(path, code, message) for path, code, message in _TSC.findall(text)])


def _biome_ids(text: str) -> list[str]:
    return _unique([_diagnostic(path, category) for path, category in _BIOME.findall(text)])


def _eslint_ids(text: str) -> list[str]:
    ids: list[str] = []
    current: str | None = None
    for line in text.splitlines():
        if _ESLINT_FILE.match(line):
            current = line.strip()
            continue
        problem = _ESLINT_PROBLEM.match(line)
        if problem and current:
            ids.append(_diagnostic(current, problem.group(2), problem.group(1)))
    return _unique(ids)


def _esbuild_ids(text: str) -> list[str]:
    modern = [_diagnostic(path, "error", message) for message, path in _ESBUILD.findall(text)]
    legacy = [_diagnostic(path, "error", message) for path, message in _ESBUILD_LEGACY.findall(text)]
    return _unique(modern + legacy)


def _ruff_ids(text: str) -> list[str]:
    concise = [_diagnostic(path, code, message) for path, code, message in _RUFF.findall(text)]
    full = [_diagnostic(path, code, message) for code, message, path in _RUFF_FULL.findall(text)]
    return _unique(concise + full)


def _mypy_ids(text: str) -> list[str]:
    return _unique([_diagnostic(path, code or "error", message) for path, message, code in _MYPY.findall(text)])


_PARSERS: dict[CheckTool, Callable[[str], list[str]]] = {
    "pytest": _pytest_ids,
    "unittest": _unittest_ids,
    "node-test": _node_test_ids,
    "jest": _jest_ids,
    "vitest": _jest_ids,
    "mocha": _mocha_ids,
    "tsc": _tsc_ids,
    "eslint": _eslint_ids,
    "biome": _biome_ids,
    "esbuild": _esbuild_ids,
    "ruff": _ruff_ids,
    "mypy": _mypy_ids,
}


def not_run_reason(output: str, exit_code: int | None) -> str | None:
    """Why a run is no evidence (stopped from outside, or denied by a sandbox), or None."""
    text = _ANSI.sub("", output)
    if exit_code is not None and (exit_code in _STOPPED_EXIT_CODES or exit_code < 0):
        return f"stopped from outside (exit code {exit_code})"
    trailing = _EXITED.search(text.rstrip())
    if trailing and int(trailing.group(1)) in _STOPPED_EXIT_CODES:
        return f"stopped from outside (exit code {trailing.group(1)})"
    if stopped := _STOPPED.search(text):
        return f"stopped from outside ({stopped.group(0).strip()[:80]})"
    if wrapper := SANDBOX_WRAPPER.match(text.lstrip()):
        inner = text.lstrip()[wrapper.end() :]
        if _SANDBOX_DENIAL.search(inner):
            return "denied by the agent's sandbox"
        if not _CLOSING_SUMMARY.search(inner):
            return "the agent's sandbox stopped it before the runner's summary"
    return None


def parse_check_result(check: CheckCommand, output: str, exit_code: int | None) -> CheckResult:
    text = _ANSI.sub("", output)
    if reason := not_run_reason(text, exit_code):
        return CheckResult(outcome="unknown", exit_code=exit_code, not_run=reason)
    if check.tool == "npm":
        tools = check.inner_tools or list(_PARSERS)
        failing = _unique([i for tool in tools for i in _PARSERS.get(tool, _pytest_ids)(text)])
    else:
        failing = _PARSERS[check.tool](text)
    counts: dict[str, int] = {}
    for number, label in _PYTEST_COUNTS.findall(text):
        key = "errors" if label.startswith("error") else label
        counts[key] = counts.get(key, 0) + int(number)
    for label, number in _TAP_COUNTS.findall(text):
        key = {"pass": "passed", "fail": "failed"}.get(label, label)
        counts[key] = counts.get(key, 0) + int(number)
    code = exit_code
    if check.piped or code is None:
        trailing = _EXITED.search(text.rstrip())
        code = int(trailing.group(1)) if trailing and not check.piped else None
    import_errors = _pytest_import_errors(text) if check.tool == "pytest" else {}
    return CheckResult(
        outcome=_outcome(text, code, failing, counts),
        exit_code=code,
        failing_ids=failing,
        counts=counts,
        import_errors={path: name for path, name in import_errors.items() if path in failing},
    )


def _outcome(text: str, code: int | None, failing: list[str], counts: dict[str, int]) -> Outcome:
    if code is not None:
        return "passed" if code == 0 else "failed"
    if failing or counts.get("failed") or counts.get("errors"):
        return "failed"
    if _FAILURE_MARKERS.search(text) or _RUNNER_FAILS.search(text):
        return "failed"
    if counts.get("passed") or _PASS_SUMMARIES.search(text):
        return "passed"
    return "unknown"

"""Read a check's recorded output: did it pass, and which tests or locations failed.

``parse_check_result(check, output, exit_code)`` returns a :class:`CheckResult`.
Failing ids, by tool:

- pytest: ``FAILED``/``ERROR`` lines of the short summary (and ``-v`` result lines):
  the node id, e.g. ``tests/test_calc.py::test_add``
- unittest: ``FAIL:``/``ERROR:`` headers: ``module.Class.test_name``
- node --test: TAP ``not ok N - name`` lines (subtests joined with `` > ``) or the
  spec reporter's innermost ``✖ name (time)`` lines
- jest/vitest/mocha: ``●`` headers, ``FAIL``/``×`` lines
- tsc: ``file(line,col): error TSxxxx`` or ``file:line:col - error TSxxxx``: ``file:line: TSxxxx``
- eslint (stylish): ``file:line: rule``; biome: ``file:line: lint/group/rule``;
  ruff: ``file:line: CODE``; mypy: ``file:line: code``

npm scripts are parsed with every parser. Pass/fail comes from the exit code when it
belongs to the check, otherwise from the output (failure markers, or a trailing
``Command exited with code N``).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from traj2env_assets.checks.recognise import CheckCommand

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PYTEST_SUMMARY_ID = re.compile(r"^(?:FAILED|ERROR) (\S.*?)(?: - .*)?$", re.MULTILINE)
_PYTEST_VERBOSE_ID = re.compile(r"^(\S+::\S+) (?:FAILED|ERROR)\b", re.MULTILINE)
_PYTEST_COUNTS = re.compile(r"(\d+) (failed|passed|errors?|skipped|xfailed|xpassed|deselected)")
_UNITTEST = re.compile(r"^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)", re.MULTILINE)
_TAP_NOT_OK = re.compile(r"^( *)not ok \d+ - (.+?)(?: # .*)?$", re.MULTILINE)
_TAP_SUBTEST = re.compile(r"^( *)# Subtest: (.+)$", re.MULTILINE)
_TAP_COUNTS = re.compile(r"^# (pass|fail|skipped|todo|cancelled) (\d+)$", re.MULTILINE)
_SPEC_FAIL = re.compile(r"^( *)\u2716 (.+?) \([\d.]+m?s\)$", re.MULTILINE)
_JEST_BULLET = re.compile(r"^\s*\u25cf (.+?)$", re.MULTILINE)
_VITEST_FAIL = re.compile(r"^\s*(?:FAIL|\u00d7|\u2715)\s+(\S+ > .+?)(?:\s+\d+ms)?$", re.MULTILINE)
_BIOME = re.compile(r"^(\S+?):(\d+):\d+ ((?:lint|assist|format|parse|syntax)\S*|organizeImports)\b", re.MULTILINE)
_TSC = re.compile(r"^(\S.*?)(?:\((\d+),\d+\)|:(\d+):\d+)(?::| -) error (TS\d+)", re.MULTILINE)
_ESLINT_FILE = re.compile(r"^(/\S+|[\w.\-/]+\.\w+)$")
_ESLINT_PROBLEM = re.compile(r"^\s+(\d+):\d+\s+error\s+.*?\s{2,}(\S+)$")
_RUFF = re.compile(r"^(\S+?):(\d+):\d+: ([A-Z]+\d+)", re.MULTILINE)
_RUFF_FULL = re.compile(r"^([A-Z]+\d+) .*\n\s*--> (\S+?):(\d+):\d+", re.MULTILINE)
_MYPY = re.compile(r"^(\S+?):(\d+): error: .*?(?:\[([\w-]+)\])?$", re.MULTILINE)
_EXITED = re.compile(r"(?:Command exited with code|Process exited with code|Exit code:?) (-?\d+)\s*$")
_FAILURE_MARKERS = re.compile(
    r"^(?:FAILED |ERROR )|\b\d+ failed\b|\b\d+ errors?\b(?! 0)|^FAIL(?:ED)?\b|^not ok |error TS\d+|"
    r"npm ERR!|npm error|\u2716 \d+ problems?|Found \d+ errors?|^(?:FAIL|ERROR): ",
    re.MULTILINE,
)


class CheckResult(BaseModel):
    passed: bool
    exit_code: int | None = None
    """The exit code used; None when pass/fail came from the output alone."""
    failing_ids: list[str] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    """pytest-style counts when printed (failed, passed, errors, skipped ...)."""


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(item for item in items if item))


def _pytest_ids(text: str) -> list[str]:
    return _unique(_PYTEST_SUMMARY_ID.findall(text) + _PYTEST_VERBOSE_ID.findall(text))


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
    # Node's spec reporter: "✖ name (1.2ms)", nested by indentation; the
    # "failing tests:" recap repeats them, which de-duplication absorbs.
    failures = [(len(m.group(1)), m.group(2)) for m in _SPEC_FAIL.finditer(text)]
    leaves = [
        name
        for index, (indent, name) in enumerate(failures)
        if not (index + 1 < len(failures) and failures[index + 1][0] > indent)
    ]
    return _unique(leaves)


def _node_test_ids(text: str) -> list[str]:
    return _unique(_tap_ids(text) + _spec_ids(text))


def _jest_ids(text: str) -> list[str]:
    bullets = [b for b in _JEST_BULLET.findall(text) if not b.startswith("Console")]
    return _unique(bullets + _VITEST_FAIL.findall(text))


def _tsc_ids(text: str) -> list[str]:
    return _unique([f"{path}:{paren or colon}: {code}" for path, paren, colon, code in _TSC.findall(text)])


def _biome_ids(text: str) -> list[str]:
    return _unique([f"{path}:{line}: {category}" for path, line, category in _BIOME.findall(text)])


def _eslint_ids(text: str) -> list[str]:
    ids: list[str] = []
    current: str | None = None
    for line in text.splitlines():
        if _ESLINT_FILE.match(line):
            current = line.strip()
            continue
        problem = _ESLINT_PROBLEM.match(line)
        if problem and current:
            ids.append(f"{current}:{problem.group(1)}: {problem.group(2)}")
    return _unique(ids)


def _ruff_ids(text: str) -> list[str]:
    concise = [f"{path}:{line}: {code}" for path, line, code in _RUFF.findall(text)]
    full = [f"{path}:{line}: {code}" for code, path, line in _RUFF_FULL.findall(text)]
    return _unique(concise + full)


def _mypy_ids(text: str) -> list[str]:
    return _unique([f"{path}:{line}: {code or 'error'}" for path, line, code in _MYPY.findall(text)])


_PARSERS = {
    "pytest": _pytest_ids,
    "unittest": _unittest_ids,
    "node-test": _node_test_ids,
    "jest": _jest_ids,
    "vitest": _jest_ids,
    "mocha": _jest_ids,
    "tsc": _tsc_ids,
    "eslint": _eslint_ids,
    "biome": _biome_ids,
    "ruff": _ruff_ids,
    "mypy": _mypy_ids,
}


def parse_check_result(check: CheckCommand, output: str, exit_code: int | None) -> CheckResult:
    text = _ANSI.sub("", output)
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
    if code is not None:
        passed = code == 0
    else:
        passed = not failing and not _FAILURE_MARKERS.search(text)
    return CheckResult(passed=passed, exit_code=code, failing_ids=failing, counts=counts)

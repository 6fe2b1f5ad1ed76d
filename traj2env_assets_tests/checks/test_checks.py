"""Recognising check commands and reading their results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traj2env_assets.checks import parse_check_result, recognise_check

PACKAGE = json.dumps(
    {"scripts": {"test": "node --test test/", "check": "biome check --write . && tsgo --noEmit", "dev": "vite"}}
)


@pytest.mark.parametrize(
    ("command", "tool", "targets"),
    [
        ("pytest -q", "pytest", []),
        ("python -m pytest tests/test_a.py::test_x -k 'not slow'", "pytest", ["tests/test_a.py::test_x"]),
        ("cd proj && uv run pytest tests", "pytest", ["tests"]),
        ("python3 -m unittest tests.test_calc", "unittest", ["tests.test_calc"]),
        ("node --test test/a.test.js", "node-test", ["test/a.test.js"]),
        ("npx tsc --noEmit", "tsc", []),
        ("eslint src", "eslint", []),
        ("ruff check .", "ruff", []),
        ("mypy src", "mypy", []),
    ],
)
def test_recognises_direct_checks(command: str, tool: str, targets: list[str]) -> None:
    check = recognise_check(command, {})
    assert check is not None
    assert (check.tool, check.targets) == (tool, targets)


@pytest.mark.parametrize(
    "command", ["ls -la", "python script.py", "npm install", "git status", "ruff format .", "npm run dev"]
)
def test_ignores_non_checks(command: str) -> None:
    assert recognise_check(command, {"package.json": PACKAGE}) is None


def test_npm_scripts_resolve_from_the_snapshot_package_json() -> None:
    snapshot = {"web/package.json": PACKAGE}
    check = recognise_check("cd /repo/web && npm run check 2>&1 | tail -5", snapshot, project_root="/repo")
    assert check is not None
    assert (check.tool, check.script, check.inner_tools, check.kind, check.piped) == (
        "npm",
        "check",
        ["biome", "tsc"],
        "typecheck",
        True,
    )
    test = recognise_check("npm test", snapshot, cwd="web")
    assert test is not None and test.inner_tools == ["node-test"] and test.kind == "tests"
    assert recognise_check("npm run typo", snapshot, cwd="web") is None
    assert recognise_check("npm run lint", {}) is not None  # no package.json: judged by name


def test_pytest_failing_ids_from_short_summary() -> None:
    output = (
        "tests/test_calc.py F.\n=== short test summary info ===\n"
        "FAILED tests/test_calc.py::test_add - assert -1 == 5\nERROR tests/test_io.py::test_read\n"
        "1 failed, 1 passed, 1 error in 0.02s\n"
    )
    check = recognise_check("pytest", {})
    assert check is not None
    result = parse_check_result(check, output, 1)
    assert not result.passed
    assert result.failing_ids == ["tests/test_calc.py::test_add", "tests/test_io.py::test_read"]
    assert result.counts == {"failed": 1, "passed": 1, "errors": 1}
    assert parse_check_result(check, "2 passed in 0.01s", 0).passed


def test_unittest_failing_ids() -> None:
    output = "FAIL: test_add (test_calc.TestCalc.test_add)\n---\nERROR: test_sub (test_calc.TestCalc)\nFAILED (failures=1, errors=1)"
    check = recognise_check("python -m unittest", {})
    assert check is not None
    result = parse_check_result(check, output, 1)
    assert result.failing_ids == ["test_calc.TestCalc.test_add", "test_calc.TestCalc.test_sub"]


def test_node_test_runner_not_ok_lines() -> None:
    output = (
        "TAP version 13\n# Subtest: math\n    # Subtest: adds\n    not ok 1 - adds\n    ok 2 - subtracts\n"
        "not ok 1 - math\n# Subtest: strings\nok 2 - strings\n# fail 1\n"
    )
    check = recognise_check("node --test", {})
    assert check is not None
    result = parse_check_result(check, output, 1)
    assert (result.passed, result.failing_ids) == (False, ["math > adds"])


def test_tsc_errors_with_file_and_line() -> None:
    output = "src/a.ts(12,5): error TS2322: Type 'string' is not assignable.\nsrc/b.ts:3:1 - error TS2304: Cannot find name 'x'.\n"
    check = recognise_check("tsc --noEmit", {})
    assert check is not None
    result = parse_check_result(check, output, 2)
    assert result.failing_ids == [
        "src/a.ts: TS2322 Type 'string' is not assignable.",
        "src/b.ts: TS2304 Cannot find name 'x'.",
    ]


def test_lint_and_mypy_ids() -> None:
    ruff = recognise_check("ruff check", {})
    mypy = recognise_check("mypy .", {})
    eslint = recognise_check("eslint .", {})
    assert ruff is not None and mypy is not None and eslint is not None
    assert parse_check_result(ruff, "a.py:3:1: F401 `os` imported but unused\nFound 1 error.", 1).failing_ids == [
        "a.py: F401 `os` imported but unused"
    ]
    assert parse_check_result(mypy, "m.py:7: error: Incompatible types  [assignment]\n", 1).failing_ids == [
        "m.py: assignment Incompatible types"
    ]
    stylish = "/repo/src/x.js\n  4:10  error  'y' is not defined  no-undef\n\n\u2716 1 problem"
    assert parse_check_result(eslint, stylish, 1).failing_ids == ["/repo/src/x.js: no-undef 'y' is not defined"]


def test_piped_check_is_judged_by_its_output() -> None:
    check = recognise_check("npm run check 2>&1 | tail -3", {"package.json": PACKAGE})
    assert check is not None and check.piped
    failing = parse_check_result(
        check, "src/a.ts(1,1): error TS2304: Cannot find name 'q'.\nCommand exited with code 0", 0
    )
    assert (failing.passed, failing.exit_code) == (False, None)
    assert parse_check_result(check, "Checked 3 files. No fixes applied.", 0).passed


def test_exit_code_from_output_when_not_recorded() -> None:
    check = recognise_check("npm run check", {"package.json": PACKAGE})
    assert check is not None
    assert not parse_check_result(check, "npm error command failed\nCommand exited with code 2", None).passed


def test_node_spec_reporter_and_tap_counts() -> None:
    spec = (
        "\u2714 tokenize (0.5ms)\n\u25b6 math\n  \u2716 adds (1.0ms)\n  \u2714 subtracts (0.2ms)\n\u2716 math (2.1ms)\n"
        "\u2139 tests 3\n\u2139 fail 1\n\n\u2716 failing tests:\n\n  \u2716 adds (1.0ms)\n"
    )
    check = recognise_check("node --test", {})
    assert check is not None
    assert parse_check_result(check, spec, 1).failing_ids == ["math > adds"]
    tap = "not ok 1 - a\n# tests 2\n# pass 1\n# fail 1\n"
    assert parse_check_result(check, tap, 1).counts == {"passed": 1, "failed": 1}


def test_pytest_ids_with_spaces_in_parameters() -> None:
    check = recognise_check("pytest", {})
    assert check is not None
    output = "FAILED tests/test_a.py::test_x[a b] - assert 1 == 2\n1 failed"
    assert parse_check_result(check, output, 1).failing_ids == ["tests/test_a.py::test_x[a b]"]


def test_biome_diagnostics_and_vitest_lines_are_not_confused() -> None:
    biome = recognise_check("npx biome check .", {})
    vitest = recognise_check("npx vitest run", {})
    assert biome is not None and vitest is not None
    output = (
        "src/a.ts:16:22 lint/correctness/noUnusedImports  FIXABLE  \u2501\u2501\u2501\n\n  ! Several of these imports are unused.\n"
        "src/b.ts:3:1 parse \u2501\u2501\u2501\n  \u00d7 expected a semicolon to end the class property\n"
    )
    assert parse_check_result(biome, output, 1).failing_ids == [
        "src/a.ts: lint/correctness/noUnusedImports",
        "src/b.ts: parse",
    ]
    assert parse_check_result(vitest, output, 1).failing_ids == []
    vitest_output = " \u00d7 src/a.test.ts > math > adds 3ms\n FAIL  src/a.test.ts > math > adds\n"
    assert parse_check_result(vitest, vitest_output, 1).failing_ids == ["src/a.test.ts > math > adds"]


OUTPUTS = Path(__file__).parent / "outputs"


@pytest.mark.parametrize("name", ["node-nested-spec.txt", "node-nested-tap.txt"])
def test_nested_node_suites_name_the_failing_leaf_with_its_suites(name: str) -> None:
    # Real Node 20 output of describe("calc") > describe("division") > it("divides evenly")
    # failing beside a passing it("adds"): suites that fail only through a child are not
    # tests, and the spec reporter's recap (leaf names alone) adds nothing.
    check = recognise_check("node --test", {})
    assert check is not None
    result = parse_check_result(check, (OUTPUTS / name).read_text(encoding="utf-8"), 1)
    assert result.failing_ids == ["calc > division > divides evenly"]


RUFF_FULL = """F401 [*] `os` imported but unused
 --> inventory.py:4:8
  |
3 | import json
4 | import os
  |        ^^
  |

F841 Local variable `count` is assigned to but never used
  --> inventory.py:17:5
   |
17 |     count = len(rows)
   |     ^^^^^
   |

Found 2 errors.
"""


def test_ruff_diagnostics_match_across_output_formats_and_moved_lines() -> None:
    check = recognise_check("python -m ruff check .", {})
    assert check is not None and check.tool == "ruff"
    concise = (
        "inventory.py:9:8: F401 [*] `os` imported but unused\n"
        "inventory.py:30:5: F841 Local variable `count` is assigned to but never used\nFound 2 errors.\n"
    )
    full = parse_check_result(check, RUFF_FULL, 1).failing_ids
    assert full == [
        "inventory.py: F401 `os` imported but unused",
        "inventory.py: F841 Local variable `count` is assigned to but never used",
    ]
    assert parse_check_result(check, concise, 1).failing_ids == full


def test_mypy_diagnostics_by_file_code_and_message() -> None:
    check = recognise_check("mypy src", {})
    assert check is not None
    output = (
        'src/app.py:5:12: error: Incompatible return value type (got "int", expected "str")  [return-value]\n'
        'src/app.py:9: note: Revealed type is "builtins.int"\n'
        "src/app.py:11: error: Missing return statement  [empty-body]\n"
        "Found 2 errors in 1 file (checked 1 source file)\n"
    )
    assert parse_check_result(check, output, 1).failing_ids == [
        'src/app.py: return-value Incompatible return value type (got "int", expected "str")',
        "src/app.py: empty-body Missing return statement",
    ]


# Each runner's default output for describe("cart") > describe("total") > it("applies
# the discount") failing beside a passing test, in the runner's documented layout.
JEST_OUTPUT = """FAIL test/cart.test.js
  cart
    total
      \u2713 equals the subtotal (2 ms)
      \u2715 applies the discount (4 ms)

  \u25cf cart \u203a total \u203a applies the discount

    expect(received).toBe(expected) // Object.is equality

Tests:       1 failed, 1 passed, 2 total
"""
MOCHA_OUTPUT = """

  cart
    total
      \u2714 equals the subtotal
      1) applies the discount


  1 passing (6ms)
  1 failing

  1) cart
       total
         applies the discount:

      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

      2999 !== 2699
"""
VITEST_OUTPUT = """ \u276f test/cart.test.js (2 tests | 1 failed) 5ms
   \u00d7 cart > total > applies the discount 3ms

 FAIL  test/cart.test.js > cart > total > applies the discount
AssertionError: expected 2999 to be 2699

 Test Files  1 failed (1)
      Tests  1 failed | 1 passed (2)
"""


@pytest.mark.parametrize(
    ("command", "output", "expected"),
    [
        ("npx jest", JEST_OUTPUT, "cart > total > applies the discount"),
        ("npx mocha", MOCHA_OUTPUT, "cart > total > applies the discount"),
        ("npx vitest run", VITEST_OUTPUT, "test/cart.test.js > cart > total > applies the discount"),
    ],
    ids=["jest", "mocha", "vitest"],
)
def test_js_test_runners_name_nested_failures_with_their_suites(command: str, output: str, expected: str) -> None:
    check = recognise_check(command, {})
    assert check is not None
    assert parse_check_result(check, output, 1).failing_ids == [expected]


# esbuild 0.17 (Debian's) and 0.25 print the same blocks; before 0.14 one "> file:l:c: error:" line each.
ESBUILD_FAILURE = (
    '\u2718 [ERROR] No matching export in "src/shapes.js" for import "areaOf"\n\n'
    '    src/app.js:1:9:\n      1 \u2502 import { areaOf } from "./shapes";\n        \u2575          ~~~~~~\n\n'
    '\u2718 [ERROR] Could not resolve "lodash-es" [plugin alias]\n\n    src/util.ts:2:18:\n'
    '      2 \u2502 import { x } from "lodash-es";\n\n'
    '\u2718 [ERROR] Could not resolve "src/missing.js"\n\n2 errors\n'
)


def test_esbuild_builds_are_build_checks_with_their_located_errors_as_ids() -> None:
    package = json.dumps(
        {"scripts": {"build": "esbuild src/app.js --bundle --outfile=dist/app.js", "dev": "esbuild src/app.js --serve"}}
    )
    direct = recognise_check("npx esbuild src/app.js --bundle --outfile=dist/app.js", {})
    script = recognise_check("npm run build", {"package.json": package})
    assert direct is not None and (direct.tool, direct.kind) == ("esbuild", "build")
    assert script is not None and (script.tool, script.kind, script.inner_tools) == ("npm", "build", ["esbuild"])
    # A server or a watcher never ends: not a check.
    assert recognise_check("esbuild src/app.js --serve=8000", {}) is None
    assert recognise_check("esbuild src/app.js --watch", {}) is None

    expected = [
        'src/app.js: error No matching export in "src/shapes.js" for import "areaOf"',
        'src/util.ts: error Could not resolve "lodash-es"',
    ]
    for check, exit_code in ((direct, 1), (script, None)):
        result = parse_check_result(check, ESBUILD_FAILURE, exit_code)
        assert (result.outcome, result.failing_ids) == ("failed", expected)
    legacy = ' > src/app.js:1:9: error: No matching export in "src/shapes.js" for import "areaOf"\n1 error\n'
    assert parse_check_result(direct, legacy, 1).failing_ids == expected[:1]
    assert parse_check_result(script, "\n  dist/app.js  1.2kb\n\n\u26a1 Done in 4ms\n", None).outcome == "passed"

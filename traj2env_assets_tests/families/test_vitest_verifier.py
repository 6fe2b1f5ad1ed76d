"""The vitest verifier, on recorded output only: there is no vitest binary and no npm
registry here, so vitest itself never runs. What is exercised for real:

- the verifier's reporter (``verifier_files/vitest_reporter.mjs``) under ``node``, driven
  with vitest's result objects in both reporter API shapes (vitest 1-2's task trees to
  ``onFinished``; vitest 3's test modules to ``onTestRunEnd``), its signed channel read
  by the real ``verdict.mjs``;
- the ids it gives agreeing with the ids the recorded output's parser gives;
- a vitest check becoming a repair task (no longer ``check_not_verifiable``) whose
  ``tests/test.sh`` runs the project's vitest with the harness config, forked workers and
  the signed reporter;
- the restore step of ``test.sh`` replacing a submission's node_modules link.

Unproven here: that a real vitest accepts this command line and config and calls the
reporter as its documented API says (see docs/family-repair.md, vitest)."""

from __future__ import annotations

import hmac
import json
import shutil
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from traj2env_assets.checks import parse_check_result, recognise_check
from traj2env_assets.families.contract import CandidateRejected, TaskSource
from traj2env_assets.families.repair.candidates import RepairCandidate
from traj2env_assets.families.repair.family import RepairFamily
from traj2env_assets.families.repair.task import _vitest_files, verifier_test_ids
from traj2env_assets.harbor import scripts
from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec
from traj2env_assets.harbor.writer import task_runner, write_task

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="needs node")
VERIFIER_FILES = resources.files("traj2env_assets.verification") / "verifier_files"
KEY = "ab" * 32

CART = "export const total = (items, discount = 0) => items.reduce((a, b) => a + b, 0);\n"
FIXED_CART = CART.replace(", 0);", ", 0) * (1 - discount);")
CART_TESTS = """import { describe, expect, test } from "vitest";
import { total } from "../src/cart.js";

describe("cart", () => {
  describe("total", () => {
    test("sums the items", () => expect(total([1, 2])).toBe(3));
    test("applies the discount", () => expect(total([100], 0.1)).toBe(90));
  });
});
"""
PACKAGE = json.dumps(
    {"name": "shop", "type": "module", "scripts": {"test": "vitest run"}, "devDependencies": {"vitest": "^2.1.0"}}
)
# vitest 2's default reporter, as a session recorded it (the check ran in "web").
FAILURE = """ \u276f test/cart.test.js (2 tests | 1 failed) 5ms
   \u00d7 cart > total > applies the discount 3ms

 FAIL  test/cart.test.js > cart > total > applies the discount
AssertionError: expected 100 to be 90

 Test Files  1 failed (1)
      Tests  1 failed | 1 passed (2)
"""
TRACKED = "web/test/cart.test.js::cart > total > applies the discount"
PASSING = "web/test/cart.test.js::cart > total > sums the items"
SENTINEL_PASS = "web/test/cart.test.js::parse merge 123"
SENTINEL_FAIL = "web/test/cart.test.js::order total 456"


def _candidate(command: str = "npm test", files: dict[str, str] | None = None) -> RepairCandidate:
    files = files or {
        "web/package.json": PACKAGE,
        "web/src/cart.js": CART,
        "web/test/cart.test.js": CART_TESTS,
        "web/test/fixtures/data.test.json": "{}",
        "web/node_modules/x/a.test.js": "",
    }
    check = recognise_check(command, {path.removeprefix("web/"): text for path, text in files.items()})
    assert check is not None
    result = parse_check_result(check, FAILURE, 1)
    return RepairCandidate(
        task_id="vitest-cart-fix",
        partition_key="vitest-cart",
        check=check,
        cwd="web",
        fail_command_index=0,
        pass_command_index=1,
        fail_exit_code=1,
        failing_ids=result.failing_ids,
        failure_output=FAILURE,
        timestamp="2026-03-01T10:00:00Z",
        fix_hash="0" * 12,
        project_files=files,
        fixed_files={"web/src/cart.js": FIXED_CART},
    )


def _spec(candidate: RepairCandidate) -> TaskSpec:
    return RepairFamily().task_spec(
        candidate, None, TaskSource(partition_key="vitest-cart", source_model=None, org="local")
    )


# --- The repair task and its test.sh -------------------------------------------------------


def test_a_vitest_check_is_a_task_tracking_the_recorded_failure_by_file_and_suites() -> None:
    spec = _spec(_candidate())
    assert spec.tests is not None
    assert (spec.tests.runner, spec.tests.reward, spec.tests.check_dir) == ("vitest", "check", "web")
    assert spec.tests.tracked_test_ids == [TRACKED]
    # vitest's default patterns, outside node_modules: the run's files are its test files.
    assert spec.tests.run_targets == ["web/test/cart.test.js"]
    # vitest comes from the project's own install, never from Debian.
    assert any("npm install" in line for line in spec.dependency_lines)
    assert not any("apt-get" in line for line in spec.dependency_lines)


def test_a_vitest_check_whose_project_does_not_declare_vitest_is_not_a_task() -> None:
    files = {
        "package.json": json.dumps({"scripts": {"test": "vitest run"}, "dependencies": {"left-pad": "1"}}),
        "src/cart.js": CART,
        "test/cart.test.js": CART_TESTS,
    }
    candidate = _candidate(files=files).model_copy(update={"cwd": ""})
    with pytest.raises(CandidateRejected) as rejected:
        _spec(candidate)
    assert rejected.value.drop.reason == "dependencies_not_installable"


@pytest.mark.parametrize(
    ("command", "files"),
    [("npx vitest run cart", ["web/test/cart.test.js"]), ("npx vitest run --reporter dot other", [])],
)
def test_the_commands_filters_select_the_run_files_as_vitest_matches_them(command: str, files: list[str]) -> None:
    assert _vitest_files(_candidate(command)) == files


@pytest.mark.parametrize("command", ["npx vitest bench", "npx vitest run --typecheck", "npx vitest --browser.enabled"])
def test_vitest_runs_that_are_not_the_projects_tests_stay_unverifiable(command: str) -> None:
    with pytest.raises(CandidateRejected) as rejected:
        _spec(_candidate(command))
    assert rejected.value.drop.reason == "check_not_verifiable"


def test_a_failure_named_without_its_file_is_found_in_the_one_file_declaring_it() -> None:
    candidate = _candidate()
    assert verifier_test_ids(candidate, ["cart > total > applies the discount", "cart > nowhere"]) == [
        "web/test/cart.test.js::cart > total > applies the discount",
        None,
    ]


def test_test_sh_runs_the_projects_vitest_with_the_harness_config_in_forked_workers(tmp_path: Path) -> None:
    spec = _spec(_candidate())
    task = write_task(spec, tmp_path)
    script = (task.path / "tests" / "test.sh").read_text()
    assert script == scripts.test_sh(spec)
    run = next(line for line in script.splitlines() if 'node "$VITEST" run' in line)
    # The harness config (never the project's), forked workers, the signed reporter.
    assert "--config /tests/traj2env/vitest.config.cjs --root /workspace --pool=forks" in run
    assert "--reporter=/tests/traj2env/vitest_reporter.mjs --reporter=default" in run
    assert 'TRAJ2ENV_TEST_FILES="$(printf \'%s\\n\' "$SENTINEL_MODULE" "${TEST_FILES[@]}")"' in run
    # The image's vitest, restored into the check's folder, reached through no link.
    assert "VITEST=/workspace/web/node_modules/vitest/vitest.mjs\n" in script
    assert 'if [ "$(realpath -e -- "$VITEST" 2>/dev/null)" != "$VITEST" ]; then' in script
    assert "TEST_FILES=(web/test/cart.test.js)" in script
    assert 'test("%s", () => { expect(%d + %d).toBe(%d); });' in script
    harness = task.path / "tests" / "traj2env"
    for name in ("vitest_reporter.mjs", "vitest.config.cjs", "verdict.mjs", "tamper_check.mjs"):
        assert (harness / name).read_bytes() == (VERIFIER_FILES / name).read_bytes()
    assert (harness / "tracked_ids.txt").read_text() == TRACKED + "\n"
    assert task_runner(task.path) == "vitest"
    assert subprocess.run(["bash", "-n", str(task.path / "tests" / "test.sh")], check=False).returncode == 0


def test_the_restore_replaces_a_node_modules_link_with_the_pristine_folder(tmp_path: Path) -> None:
    """test.sh's step 1 on a submission whose web/node_modules links to its own packages:
    the pristine folder returns (cp cannot copy a folder over a link, so the link must go)."""
    spec = _spec(_candidate())
    script = scripts.test_sh(spec)
    start = script.index("# 1. Only solution code crosses")
    step = script[start : script.index("python_environments() {")]
    work, pristine, harness = tmp_path / "workspace", tmp_path / "pristine", tmp_path / "harness"
    (pristine / "web" / "node_modules" / "vitest").mkdir(parents=True)
    (pristine / "web" / "node_modules" / "vitest" / "vitest.mjs").write_text("// the image's\n")
    (work / "web" / "mine" / "vitest").mkdir(parents=True)
    (work / "web" / "mine" / "vitest" / "vitest.mjs").write_text("// the submission's\n")
    (work / "web" / "node_modules").symlink_to("mine")
    harness.mkdir()
    (harness / "pristine_paths.txt").write_text("")
    prelude = f"WORK={work}\nPRISTINE={pristine}\nHARNESS={harness}\n"
    subprocess.run(["bash", "-c", prelude + step], check=True, timeout=60)
    entry = work / "web" / "node_modules" / "vitest" / "vitest.mjs"
    assert not (work / "web" / "node_modules").is_symlink()
    assert entry.read_text() == "// the image's\n"


# --- The reporter under node, its channel read by verdict.mjs -------------------------------

# Drives the reporter as vitest would: onInit with the resolved config, then the run's end
# in the given API shape. Vitest 3's reported tasks are rebuilt from their recorded data
# (objects with methods: state(), errors(), children.allTests(), result()).
DRIVER = """
import Reporter from %(reporter)s;
const run = JSON.parse(process.argv[2]);
const reporter = new Reporter();
reporter.onInit({ config: { pool: run.pool } });
const testCase = (t) => ({ type: "test", name: t.name, fullName: t.fullName, result: () => ({ state: t.state }) });
const module = (m) => ({
  type: "module", moduleId: m.moduleId, state: () => m.state, errors: () => m.errors,
  children: { *allTests() { yield* m.tests.map(testCase); }, *allSuites() { yield* m.suites.map((s) => ({ errors: () => s.errors })); } },
});
if (run.shape === "onTestRunEnd") {
  reporter.onTestRunEnd(run.modules.map(module), run.errors, run.reason);
  // Vitest 3 calls the older hook as well.
  reporter.onFinished(run.files ?? [], run.errors);
} else {
  reporter.onFinished(run.files, run.errors);
}
"""


def _test(name: str, state: str, mode: str = "run") -> dict[str, object]:
    return {"type": "test", "name": name, "mode": mode, "result": {"state": state} if state else None}


def _suite(name: str, tasks: list[dict[str, object]], errors: list[str] | None = None) -> dict[str, object]:
    return {
        "type": "suite",
        "name": name,
        "mode": "run",
        "tasks": tasks,
        "result": {"state": "fail" if errors else "pass", **({"errors": errors} if errors else {})},
    }


def _file(path: str, tasks: list[dict[str, object]], state: str = "pass", errors: list[str] | None = None):
    return {
        "type": "suite",
        "name": path,
        "filepath": f"/workspace/{path}",
        "mode": "run",
        "tasks": tasks,
        "result": {"state": state, **({"errors": errors} if errors else {})},
    }


def _v2_files(discount: str) -> list[dict[str, object]]:
    """Vitest 2's tree for the cart run: the tests, the sentinels appended to the file, and a
    sentinel module of its own."""
    return [
        _file(
            "web/test/cart.test.js",
            [
                _suite(
                    "cart",
                    [_suite("total", [_test("sums the items", "pass"), _test("applies the discount", discount)])],
                ),
                _test("parse merge 123", "pass"),
                _test("order total 456", "fail"),
                _test("a todo", "", mode="todo"),
            ],
            state="fail",
        ),
        _file("web/test/load-limit-7.test.js", [_test("load limit 1", "pass"), _test("count value 2", "fail")], "fail"),
    ]


def _v3_modules(discount: str) -> list[dict[str, object]]:
    states = {"pass": "passed", "fail": "failed"}
    cart = [
        ("cart > total > sums the items", "passed"),
        ("cart > total > applies the discount", states[discount]),
        ("parse merge 123", "passed"),
        ("order total 456", "failed"),
        ("a todo", "skipped"),
    ]
    return [
        {
            "moduleId": "/workspace/web/test/cart.test.js",
            "state": "failed",
            "errors": [],
            "suites": [{"errors": []}],
            "tests": [{"name": name.rsplit(" > ", 1)[-1], "fullName": name, "state": state} for name, state in cart],
        },
        {
            "moduleId": "/workspace/web/test/load-limit-7.test.js",
            "state": "failed",
            "errors": [],
            "suites": [],
            "tests": [
                {"name": "load limit 1", "fullName": "load limit 1", "state": "passed"},
                {"name": "count value 2", "fullName": "count value 2", "state": "failed"},
            ],
        },
    ]


def _run_reporter(tmp_path: Path, run: dict[str, object]) -> Path:
    """The reporter's channel output for one driven run (descriptor 3 a file, the key on 4)."""
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER % {"reporter": json.dumps(str(VERIFIER_FILES / "vitest_reporter.mjs"))})
    channel = tmp_path / "results.jsonl"
    with channel.open("wb") as out:
        subprocess.run(
            f"node {driver} {json.dumps(json.dumps(run))} 3>&{out.fileno()} 4< <(printf '%s' {KEY})",
            shell=True,
            executable="/bin/bash",
            pass_fds=(out.fileno(),),
            check=True,
            timeout=60,
        )
    return channel


def _verdict(tmp_path: Path, channel: Path, sentinels: dict[str, str] | None = None) -> dict[str, Any]:
    sentinels = (
        sentinels
        if sentinels is not None
        else {
            SENTINEL_PASS: "passed",
            SENTINEL_FAIL: "failed",
            "web/test/load-limit-7.test.js::load limit 1": "passed",
            "web/test/load-limit-7.test.js::count value 2": "failed",
        }
    )
    (tmp_path / "tracked_ids.txt").write_text(TRACKED + "\n")
    (tmp_path / "sentinels.txt").write_text("".join(f"{name}\t{outcome}\n" for name, outcome in sentinels.items()))
    (tmp_path / "tamper.json").write_text('{"findings": []}\n')
    out = tmp_path / "logs"
    out.mkdir(exist_ok=True)
    subprocess.run(
        [
            "node",
            str(VERIFIER_FILES / "verdict.mjs"),
            str(channel),
            KEY,
            str(tmp_path / "tracked_ids.txt"),
            str(tmp_path / "sentinels.txt"),
            "check",
            str(tmp_path / "tamper.json"),
            str(out),
        ],
        check=True,
        timeout=60,
    )
    verdict = json.loads((out / "verdict.json").read_text())
    assert (out / "reward.txt").read_text() == f"{verdict['reward']}\n"
    return verdict


def _run(shape: str, discount: str, **changes: object) -> dict[str, Any]:
    run: dict[str, object] = {"shape": shape, "pool": "forks", "errors": [], "reason": "failed"}
    run.update(
        {"files": _v2_files(discount)}
        if shape == "onFinished"
        else {"modules": _v3_modules(discount), "files": _v2_files(discount)}
    )
    run.update(changes)
    return run


SHAPES = pytest.mark.parametrize("shape", ["onFinished", "onTestRunEnd"])


@needs_node
@SHAPES
def test_a_reference_like_run_scores_one(tmp_path: Path, shape: str) -> None:
    verdict = _verdict(tmp_path, _run_reporter(tmp_path, _run(shape, "pass")))
    assert (verdict["reward"], verdict["reason"]) == (1, "all_tracked_passed"), verdict
    assert verdict["tracked"] == {TRACKED: "passed"}
    assert verdict["forged_records"] == 0


@needs_node
@SHAPES
def test_the_tracked_test_failing_scores_zero(tmp_path: Path, shape: str) -> None:
    verdict = _verdict(tmp_path, _run_reporter(tmp_path, _run(shape, "fail")))
    assert (verdict["reward"], verdict["reason"]) == (0, "check_failed"), verdict
    assert verdict["tracked"] == {TRACKED: "failed"}


@needs_node
@SHAPES
def test_vitest_3_reports_once_though_it_calls_both_hooks(tmp_path: Path, shape: str) -> None:
    records = [
        json.loads(json.loads(line)["body"])
        for line in _run_reporter(tmp_path, _run(shape, "pass")).read_text().splitlines()
    ]
    assert [record["seq"] for record in records] == list(range(1, len(records) + 1))
    assert [record["kind"] for record in records].count("end") == 1 and records[-1]["kind"] == "end"
    reports = {record["id"]: record["outcome"] for record in records if record["kind"] == "report"}
    assert reports == {
        PASSING: "passed",
        TRACKED: "passed",
        SENTINEL_PASS: "passed",
        SENTINEL_FAIL: "failed",
        "web/test/cart.test.js::a todo": "skipped",
        "web/test/load-limit-7.test.js::load limit 1": "passed",
        "web/test/load-limit-7.test.js::count value 2": "failed",
    }


@needs_node
def test_a_run_without_its_end_record_scores_zero(tmp_path: Path) -> None:
    channel = _run_reporter(tmp_path, _run("onFinished", "pass"))
    lines = channel.read_text().splitlines()
    assert json.loads(json.loads(lines[-1])["body"])["kind"] == "end"
    channel.write_text("".join(line + "\n" for line in lines[:-1]))
    assert _verdict(tmp_path, channel)["reason"] == "run_incomplete"


@needs_node
def test_an_interrupted_vitest_3_run_sends_no_end_and_scores_zero(tmp_path: Path) -> None:
    verdict = _verdict(tmp_path, _run_reporter(tmp_path, _run("onTestRunEnd", "pass", reason="interrupted")))
    assert (verdict["reward"], verdict["reason"]) == (0, "run_incomplete"), verdict


@needs_node
@SHAPES
def test_a_run_outside_forked_workers_is_not_reported_and_scores_zero(tmp_path: Path, shape: str) -> None:
    channel = _run_reporter(tmp_path, _run(shape, "pass", pool="threads"))
    assert channel.read_text() == ""
    assert _verdict(tmp_path, channel)["reason"] == "run_incomplete"


@needs_node
@pytest.mark.parametrize("forgery", ["unsigned", "wrong_key"])
def test_an_unsigned_or_forged_record_scores_zero(tmp_path: Path, forgery: str) -> None:
    channel = _run_reporter(tmp_path, _run("onFinished", "fail"))
    lines = channel.read_text().splitlines()
    body = json.dumps({"kind": "report", "id": TRACKED, "outcome": "passed", "seq": len(lines) + 1})
    mac = "0" * 64 if forgery == "unsigned" else hmac.new(b"guess", body.encode(), "sha256").hexdigest()
    channel.write_text("".join(line + "\n" for line in lines) + json.dumps({"body": body, "mac": mac}) + "\n")
    verdict = _verdict(tmp_path, channel)
    assert (verdict["reward"], verdict["reason"], verdict["forged_records"]) == (0, "results_forged", 1), verdict


@needs_node
@SHAPES
def test_a_missing_sentinel_scores_zero(tmp_path: Path, shape: str) -> None:
    run = _run(shape, "pass")
    # A run that lost the must-fail sentinel appended to the test file (or flipped it).
    run["files"][0]["tasks"] = [t for t in run["files"][0]["tasks"] if t["name"] != "order total 456"]
    for module in run.get("modules", []):
        module["tests"] = [test for test in module["tests"] if test["fullName"] != "order total 456"]
    verdict = _verdict(tmp_path, _run_reporter(tmp_path, run))
    assert (verdict["reward"], verdict["reason"]) == (0, "sentinel_contradiction"), verdict
    assert verdict["sentinels"][SENTINEL_FAIL] == "missing"


@needs_node
@SHAPES
def test_a_file_that_fails_to_load_is_a_failing_unit_named_by_the_file(tmp_path: Path, shape: str) -> None:
    broken = "web/test/broken.test.js"
    run = _run(shape, "pass")
    run["files"].append(_file(broken, [], state="fail", errors=["SyntaxError: Unexpected token"]))
    if "modules" in run:
        run["modules"].append(
            {
                "moduleId": f"/workspace/{broken}",
                "state": "failed",
                "errors": ["SyntaxError: Unexpected token"],
                "suites": [],
                "tests": [],
            }
        )
    verdict = _verdict(tmp_path, _run_reporter(tmp_path, run))
    assert (verdict["reward"], verdict["reason"], verdict["failed"]) == (0, "check_failed", [broken]), verdict


@needs_node
def test_a_failing_suite_hook_fails_its_file_and_unhandled_errors_fail_the_run(tmp_path: Path) -> None:
    run = _run("onFinished", "pass", errors=["Error: rejected after the test"])
    cart = run["files"][0]["tasks"][0]
    cart["result"] = {"state": "fail", "errors": ["Error: beforeAll failed"]}
    verdict = _verdict(tmp_path, _run_reporter(tmp_path, run))
    assert verdict["failed"] == ["<unhandled errors>", "web/test/cart.test.js"], verdict
    assert verdict["reward"] == 0


@needs_node
@SHAPES
def test_the_reporters_ids_are_the_ids_the_recorded_output_is_tracked_by(tmp_path: Path, shape: str) -> None:
    """The parser's ``test/cart.test.js > cart > total > applies the discount`` (from the
    check's folder) becomes the tracked id; the reporter names the same test the same way."""
    candidate = _candidate()
    [tracked] = verifier_test_ids(candidate, candidate.failing_ids)
    records = [
        json.loads(json.loads(line)["body"])
        for line in _run_reporter(tmp_path, _run(shape, "fail")).read_text().splitlines()
    ]
    failed = {record["id"] for record in records if record.get("outcome") == "failed"}
    assert candidate.failing_ids == ["test/cart.test.js > cart > total > applies the discount"]
    assert tracked in failed and tracked == TRACKED


# --- The harness config ----------------------------------------------------------------------


@needs_node
def test_the_harness_config_runs_exactly_the_listed_files_with_globals_and_no_project_config(tmp_path: Path) -> None:
    files = "web/test/cart.test.js\nweb/test/[id].test.ts\n"
    shown = subprocess.run(
        [
            "node",
            "-e",
            f"console.log(JSON.stringify(require({json.dumps(str(VERIFIER_FILES / 'vitest.config.cjs'))})))",
        ],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TRAJ2ENV_TEST_FILES": files},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    config = json.loads(shown)
    assert config["test"]["include"] == ["web/test/cart.test.js", "web/test/\\[id\\].test.ts"]
    assert (config["test"]["exclude"], config["test"]["globals"], config["test"]["cache"]) == ([], True, False)
    # Inline PostCSS options: vite never looks for (and imports) the project's postcss.config.*.
    assert config["css"] == {"postcss": {}}
    assert config["cacheDir"] == f"{tmp_path}/vite-cache"
    assert "plugins" not in config and "setupFiles" not in config["test"] and "globalSetup" not in config["test"]


def test_a_vitest_spec_needs_no_check_command() -> None:
    spec = VerifierSpec(
        runner="vitest",
        tracked_test_ids=[TRACKED],
        run_targets=["web/test/cart.test.js"],
        reward="check",
        check_dir="web",
    )
    assert spec.check_command == []

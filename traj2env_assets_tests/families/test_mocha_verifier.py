"""A mocha repair task end to end on the real Docker engine: Debian's mocha installed in
the task image, the recorded failure reproduced there (calibration), the verifier running
mocha in parallel mode with its own signed reporter in mocha's process and the tests in
its workers, the reference scoring 1 and every default control 0, and submissions that
forge mocha's results (a patched ``it``, records written to the results pipe with and
without a key read from the reporter's descriptor, a ``.mocharc`` requiring code into
mocha's own process) scoring 0."""

from __future__ import annotations

import pytest

from traj2env_assets.checks import parse_check_result, recognise_check
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import TaskSource
from traj2env_assets.families.repair.candidates import RepairCandidate
from traj2env_assets.families.repair.family import CHECK_PROBE, RepairFamily
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.stages.calibration.calibration import run_probes
from traj2env_assets.verification.controls import DEFAULT_CONTROLS
from traj2env_assets.verification.trial import TrialTask, run_matrix, run_trial
from traj2env_assets_tests.families.controls import SubmitFiles
from traj2env_assets_tests.trial_verdicts import verdict_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CALC = "exports.add = (a, b) => a - b;\nexports.double = (a) => a * 2;\n"
FIXED = CALC.replace("a - b", "a + b")
TESTS = """const assert = require("node:assert");
const { add, double } = require("../calc");

describe("calc", () => {
  it("adds two numbers", () => {
    assert.strictEqual(add(2, 3), 5);
  });
  it("doubles", () => {
    assert.strictEqual(double(4), 8);
  });
});
"""
# A second spec file under test/ that mocha's default spec runs too.
MORE_TESTS = """const assert = require("node:assert");
const { double } = require("../calc");

it("doubles zero", () => {
  assert.strictEqual(double(0), 0);
});
"""
PACKAGE = '{"name": "calc", "version": "1.0.0", "scripts": {"test": "mocha"}}\n'
FAILURE = """

  calc
    1) adds two numbers
    \u2714 doubles

  \u2714 doubles zero

  2 passing (6ms)
  1 failing

  1) calc
       adds two numbers:

      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

-1 !== 5

      at Context.<anonymous> (test/calc.test.js:6:12)

"""
# Solution code that tries every way around mocha's results: make `it` pass whatever its
# body does, read the key from the reporter's descriptor and sign records with it, write
# records into the results pipe (its own descriptor 3 and its parent's).
FORGERY = (
    FIXED.replace("a + b", "a - b")
    + """
try {
  const real = globalThis.it;
  if (real) globalThis.it = (title) => real(title, () => {});
} catch {}
try {
  const fs = require("fs");
  const { createHmac } = require("crypto");
  let key = "0";
  for (const source of [4, `/proc/${process.ppid}/fd/4`]) { try { key = fs.readFileSync(source, "utf8").trim() || key; } catch {} }
  const body = JSON.stringify({ kind: "report", id: "test/calc.test.js::calc > adds two numbers", outcome: "passed", seq: 1 });
  const line = JSON.stringify({ body, mac: createHmac("sha256", key).update(body).digest("hex") }) + "\\n";
  for (const target of [3, `/proc/${process.ppid}/fd/3`]) { try { fs.writeFileSync(target, line, { flag: "a" }); } catch {} }
} catch {}
"""
)
# A mocha config that would load code into mocha's own process, beside the reporter, and
# mark every test passed there (code the static check has no rule for).
MOCHARC = '{"require": ["./forge.cjs"], "ui": "tdd"}\n'
FORGE = """const Runner = require.main.require("../lib/runner.js");
const emit = Runner.prototype.emit;
Runner.prototype.emit = function (name, ...args) {
  return emit.call(this, name === "fail" ? "pass" : name, ...args);
};
"""


@pytest.fixture(scope="module")
def mocha_task(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("mocha-task")
    files = {"package.json": PACKAGE, "calc.js": CALC, "test/calc.test.js": TESTS, "test/more.test.js": MORE_TESTS}
    check = recognise_check("npm test", files)
    assert check is not None and check.tool == "npm" and check.inner_tools == ["mocha"]
    result = parse_check_result(check, FAILURE, 1)
    candidate = RepairCandidate(
        task_id="mocha-calc-fix",
        partition_key="mocha-calc",
        check=check,
        fail_command_index=0,
        pass_command_index=1,
        fail_exit_code=1,
        failing_ids=result.failing_ids,
        failure_output=FAILURE,
        timestamp="2026-03-01T10:00:00Z",
        fix_hash="0" * 12,
        project_files=files,
        fixed_files={"calc.js": FIXED},
    )
    family = RepairFamily()
    spec = family.task_spec(candidate, None, TaskSource(partition_key="mocha-calc", source_model=None, org="local"))
    task = write_task(spec, root / "dataset")
    engine = DockerEngine(container_memory="1g", agent_timeout_s=120, verifier_timeout_s=240)
    image = engine.build(task.environment_dir)
    yield {"candidate": candidate, "spec": spec, "task": task, "engine": engine, "image": image, "family": family}
    engine.client.images.remove(image.tag, force=True)


def test_mocha_failures_are_tracked_by_file_and_run_by_debians_mocha(mocha_task) -> None:
    spec, task = mocha_task["spec"], mocha_task["task"]
    assert spec.tests.runner == "mocha"
    assert spec.tests.tracked_test_ids == ["test/calc.test.js::calc > adds two numbers"]
    assert spec.tests.run_targets == ["test/calc.test.js", "test/more.test.js"]
    assert "apt-get install -y --no-install-recommends mocha" in (task.environment_dir / "Dockerfile").read_text()
    script = (task.path / "tests" / "test.sh").read_text()
    assert "/usr/bin/mocha --no-config --no-package --parallel" in script
    assert "--reporter /tests/traj2env/mocha_reporter.cjs" in script


def test_calibration_reproduces_the_recorded_failure_in_the_image(mocha_task) -> None:
    engine, candidate, family = mocha_task["engine"], mocha_task["candidate"], mocha_task["family"]
    plan = family.calibration_plan(candidate, mocha_task["spec"], None)
    results = {result.name: result for result in run_probes(engine, mocha_task["image"].tag, plan)}
    assert "adds two numbers" in results[CHECK_PROBE].output_tail
    assert family.judge_calibration(candidate, results).drop is None


def test_reference_scores_one_and_every_default_control_zero(mocha_task) -> None:
    engine, task = mocha_task["engine"], mocha_task["task"]
    matrix = run_matrix(
        engine,
        TrialTask(image=mocha_task["image"].tag, task_dir=task.path),
        DEFAULT_CONTROLS,
    )
    rewards = {result.control: result.reward for result in matrix.results}
    reasons = {result.control: verdict_of(result).get("reason") for result in matrix.results}
    assert rewards["reference"] == 1.0, reasons
    assert reasons["reference"] == "all_tracked_passed"
    reference = next(result for result in matrix.results if result.control == "reference")
    # Every test of both files and the sentinels reported, through the signed channel.
    assert reference.verdict is not None
    assert reference.verdict["results_recorded"] == 3 + 2 * 3, reference.verdict
    assert all(reward == 0.0 for control, reward in rewards.items() if control != "reference"), rewards


def test_forging_mochas_results_scores_zero(mocha_task) -> None:
    engine, task = mocha_task["engine"], mocha_task["task"]
    trial = TrialTask(image=mocha_task["image"].tag, task_dir=task.path)
    forged = run_trial(engine, trial, SubmitFiles({"/workspace/calc.js": FORGERY.encode()}))
    verdict = forged.verdict
    # The static check names the patched global and the descriptor reads first; behind it,
    # the run itself shows the forgery: no record signed without the key reached the
    # verdict, and the patched `it` passes the must-fail sentinel of the test file too.
    assert verdict is not None
    assert (forged.reward, verdict["reason"]) == (0.0, "tamper_detected"), verdict
    assert verdict["forged_records"] == 0, verdict
    in_test_file = [outcome for name, outcome in verdict["sentinels"].items() if name.startswith("test/calc.test.js::")]
    assert in_test_file == ["passed", "passed"], verdict


def test_a_mocharc_requiring_code_into_mochas_process_is_not_loaded(mocha_task) -> None:
    engine, task = mocha_task["engine"], mocha_task["task"]
    trial = TrialTask(image=mocha_task["image"].tag, task_dir=task.path)
    files = {"/workspace/.mocharc.json": MOCHARC.encode(), "/workspace/forge.cjs": FORGE.encode()}
    result = run_trial(engine, trial, SubmitFiles(files))
    assert result.verdict is not None
    assert (result.reward, result.verdict["reason"]) == (0.0, "check_failed"), result.verdict
    assert result.verdict["tamper_findings"] == []
    assert result.verdict["tracked"] == {"test/calc.test.js::calc > adds two numbers": "failed"}

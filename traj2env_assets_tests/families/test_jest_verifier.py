"""A jest repair task end to end on the real Docker engine: Debian's jest installed in the
task image, the recorded failure reproduced there (calibration), the verifier running jest
with its own signed reporter, the reference scoring 1 and every default control 0, and a
submission that forges jest's results (a patched ``expect``, records written to the
results pipe, a fake ``--json`` file) scoring 0."""

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
TESTS = """const { add, double } = require("./calc");

describe("calc", () => {
  test("adds two numbers", () => {
    expect(add(2, 3)).toBe(5);
  });
  test("doubles", () => {
    expect(double(4)).toBe(8);
  });
});
"""
# The project's jest config names a global setup module: code jest would run in its own
# process, beside the reporter, before the tests.
PACKAGE = (
    '{"name": "calc", "version": "1.0.0", "scripts": {"test": "jest"}, "jest": {"globalSetup": "./jest.setup.js"}}\n'
)
GLOBAL_SETUP = "module.exports = async () => {};\n"
# A global setup that steals the reporter's key as it signs and re-signs the tracked
# test's failure as a pass (code the static check has no rule for).
FORGING_GLOBAL_SETUP = """const crypto = require("node:crypto");
const fs = require("node:fs");
const realHmac = crypto.createHmac;
const realWrite = fs.writeSync;
let key = null;
crypto.createHmac = (algorithm, secret) => { key = secret; return realHmac(algorithm, secret); };
fs.writeSync = (fd, data, ...rest) => {
  if (fd === 3 && key !== null && typeof data === "string") {
    try {
      const record = JSON.parse(JSON.parse(data).body);
      if (record.id === "calc.test.js::calc > adds two numbers") record.outcome = "passed";
      const body = JSON.stringify(record);
      data = JSON.stringify({ body, mac: realHmac("sha256", key).update(body).digest("hex") }) + "\\n";
    } catch {}
  }
  return realWrite(fd, data, ...rest);
};
module.exports = async () => {};
"""
FAILURE = """FAIL ./calc.test.js
  calc
    \u2715 adds two numbers (4 ms)
    \u2713 doubles (1 ms)

  \u25cf calc \u203a adds two numbers

    expect(received).toBe(expected) // Object.is equality

    Expected: 5
    Received: -1

Tests:       1 failed, 1 passed, 2 total
"""
# Solution code that tries every way around jest's results: make expect never fail, write
# records into the results pipe (its own descriptor 3 and its parent's), and write the
# report a --json run would leave.
FORGERY = (
    FIXED.replace("a + b", "a - b")
    + """
try { globalThis.expect = Object.assign(() => ({ toBe() {}, toEqual() {} }), globalThis.expect); } catch {}
try {
  const fs = require("fs");
  const line = JSON.stringify({ body: JSON.stringify({ kind: "report", id: "calc.test.js::calc > adds two numbers", outcome: "passed", seq: 1 }), mac: "0".repeat(64) }) + "\\n";
  for (const target of [3, `/proc/${process.ppid}/fd/3`]) { try { fs.writeFileSync(target, line, { flag: "a" }); } catch {} }
  fs.writeFileSync("/tmp/jest-results.json", JSON.stringify({ success: true, numFailedTests: 0 }));
} catch {}
"""
)


@pytest.fixture(scope="module")
def jest_task(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("jest-task")
    files = {"package.json": PACKAGE, "calc.js": CALC, "calc.test.js": TESTS, "jest.setup.js": GLOBAL_SETUP}
    check = recognise_check("npm test", files)
    assert check is not None and check.tool == "npm" and check.inner_tools == ["jest"]
    result = parse_check_result(check, FAILURE, 1)
    candidate = RepairCandidate(
        task_id="jest-calc-fix",
        partition_key="jest-calc",
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
    spec = family.task_spec(candidate, None, _source())
    task = write_task(spec, root / "dataset")
    engine = DockerEngine(container_memory="1g", agent_timeout_s=120, verifier_timeout_s=240)
    image = engine.build(task.environment_dir)
    yield {"candidate": candidate, "spec": spec, "task": task, "engine": engine, "image": image, "family": family}
    engine.client.images.remove(image.tag, force=True)


def _source() -> TaskSource:
    return TaskSource(partition_key="jest-calc", source_model=None, org="local")


def test_jest_failures_are_tracked_by_file_and_run_by_jest(jest_task) -> None:
    spec, task = jest_task["spec"], jest_task["task"]
    assert spec.tests.runner == "jest"
    assert spec.tests.tracked_test_ids == ["calc.test.js::calc > adds two numbers"]
    assert "apt-get install -y --no-install-recommends jest" in (task.environment_dir / "Dockerfile").read_text()
    assert "--reporters=/tests/traj2env/jest_reporter.cjs" in (task.path / "tests" / "test.sh").read_text()


def test_calibration_reproduces_the_recorded_failure_in_the_image(jest_task) -> None:
    engine, candidate, family = jest_task["engine"], jest_task["candidate"], jest_task["family"]
    plan = family.calibration_plan(candidate, jest_task["spec"], None)
    results = {result.name: result for result in run_probes(engine, jest_task["image"].tag, plan)}
    assert "adds two numbers" in results[CHECK_PROBE].output_tail
    assert family.judge_calibration(candidate, results).drop is None


def test_reference_scores_one_and_every_default_control_zero(jest_task) -> None:
    engine, task = jest_task["engine"], jest_task["task"]
    matrix = run_matrix(
        engine,
        TrialTask(image=jest_task["image"].tag, task_dir=task.path),
        DEFAULT_CONTROLS,
    )
    rewards = {result.control: result.reward for result in matrix.results}
    reasons = {result.control: verdict_of(result).get("reason") for result in matrix.results}
    assert rewards["reference"] == 1.0, reasons
    assert reasons["reference"] == "all_tracked_passed"
    assert all(reward == 0.0 for control, reward in rewards.items() if control != "reference"), rewards


def test_forging_jests_results_scores_zero(jest_task) -> None:
    engine, task = jest_task["engine"], jest_task["task"]
    trial = TrialTask(image=jest_task["image"].tag, task_dir=task.path)
    forged = run_trial(engine, trial, SubmitFiles({"/workspace/calc.js": FORGERY.encode()}))
    verdict = forged.verdict
    assert verdict is not None
    # The static check names the patched global first; behind it, the run itself shows the
    # forgery: records in the pipe without the key, or a must-fail sentinel passing.
    assert (forged.reward, verdict["reason"]) == (0.0, "tamper_detected"), verdict
    in_test_file = [outcome for name, outcome in verdict["sentinels"].items() if name.startswith("calc.test.js::")]
    # One of the two sentinels appended to the test file must fail; the patched expect passes both.
    assert verdict["forged_records"] > 0 or in_test_file == ["passed", "passed"], verdict


def test_a_global_setup_named_by_the_projects_jest_config_is_not_run(jest_task) -> None:
    engine, task = jest_task["engine"], jest_task["task"]
    trial = TrialTask(image=jest_task["image"].tag, task_dir=task.path)
    result = run_trial(
        engine,
        trial,
        SubmitFiles({"/workspace/jest.setup.js": FORGING_GLOBAL_SETUP.encode()}),
    )
    assert result.verdict is not None
    assert (result.reward, result.verdict["reason"]) == (0.0, "check_failed"), result.verdict
    assert result.verdict["tamper_findings"] == []
    assert result.verdict["tracked"] == {"calc.test.js::calc > adds two numbers": "failed"}

"""The control matrix on real containers, the sandbox limits, and cleanup."""

from __future__ import annotations

import time
from pathlib import Path

import docker
import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.labels import CONTROL_LABEL
from traj2env_assets.docker_engine.sandbox import ContainerLimits, exec_with_deadline, put_files, sandbox
from traj2env_assets.verification.controls import (
    DEFAULT_CONTROLS,
    AgentAction,
    Control,
    EditTestsControl,
    ForgeRewardControl,
    PytestHookControl,
)
from traj2env_assets.verification.trial import (
    RUN_LABEL,
    TrialTask,
    run_matrix,
    run_trial,
)
from traj2env_assets_tests.trial_verdicts import verdict_of

pytestmark = pytest.mark.docker


class ScriptControl(Control):
    """A control that runs a fixed script; used to probe the agent container."""

    def __init__(self, name: str, script: str) -> None:
        self.name = name
        self.script = script

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(script=self.script)


class InterruptingControl(Control):
    """Raises KeyboardInterrupt once another control's container is running."""

    name = "interrupt"

    def __init__(self, client: docker.DockerClient, waits_for: str) -> None:
        self.client = client
        self.waits_for = waits_for

    def action(self, task_dir: Path) -> AgentAction:
        deadline = time.monotonic() + 60
        label = {"label": f"{CONTROL_LABEL}={self.waits_for}", "status": "running"}
        while not self.client.containers.list(filters=label) and time.monotonic() < deadline:
            time.sleep(0.2)
        raise KeyboardInterrupt


def test_python_matrix_scores_reference_one_and_every_other_control_zero(
    engine: DockerEngine, python_trial: TrialTask
) -> None:
    matrix = run_matrix(engine, python_trial, parallelism=2)
    applicable = [control for control in DEFAULT_CONTROLS if control.applies_to(python_trial.task_dir)]
    assert [control.name for control in DEFAULT_CONTROLS if control not in applicable] == ["test_named_forgery"]
    assert matrix.rewards() == {control.name: control.expected_reward for control in applicable}
    assert matrix.passed
    verdicts = {result.control: verdict_of(result) for result in matrix.results}
    assert verdicts["noop"]["tracked"]["tests/test_calc.py::test_add"] == "failed"
    # Each layer catches what it is for, whichever decides the reward first: the runner
    # sees replaced report and assertion machinery, the channel unsigned records, the
    # static check the constructs themselves.
    assert "entry_point_changed: TestReport.__init__" in verdicts["forge_reward"]["integrity_problems"]
    assert "entry_point_changed: TestReport.from_item_and_call" in verdicts["report_forgery"]["integrity_problems"]
    assert "entry_point_changed: TestCase.assertEqual" in verdicts["assert_monkeypatch"]["integrity_problems"]
    # The import hook hides its names from the static check; the runner sees the hook.
    assert verdicts["import_hook"]["tamper_findings"] == []
    assert "entry_point_changed: builtins.__import__" in verdicts["import_hook"]["integrity_problems"]
    assert verdicts["results_rewrite"]["forged_records"] > 0
    rules = {name: {finding["rule"] for finding in verdict["tamper_findings"]} for name, verdict in verdicts.items()}
    assert "module_shadowing" in rules["stdlib_shadow"]
    assert "always_equal" in rules["always_equal"]
    assert "exit_handler" in rules["results_rewrite"]
    # A name-keeping test edit never reaches the run: the pristine tests fail as before.
    assert verdicts["tests_edit_keep_names"]["tracked"]["tests/test_calc.py::test_add"] == "failed"
    # Two sentinel pairs: in a new module beside the tracked tests and in the tracked file.
    sentinels = verdicts["reference"]["sentinels"]
    assert sorted(sentinels.values()) == ["failed", "failed", "passed", "passed"]
    assert {test_id.split("::")[0] for test_id in sentinels} >= {"tests/test_calc.py"}
    assert verdicts["reference"]["tamper_findings"] == [] and verdicts["reference"]["integrity_problems"] == []


def test_node_matrix_scores_reference_one_and_every_other_control_zero(
    engine: DockerEngine, node_trial: TrialTask
) -> None:
    matrix = run_matrix(engine, node_trial, parallelism=2)
    applicable = [control for control in DEFAULT_CONTROLS if control.applies_to(node_trial.task_dir)]
    assert {"stdlib_shadow", "always_equal", "import_hook"}.isdisjoint(control.name for control in applicable)
    assert matrix.rewards() == {control.name: control.expected_reward for control in applicable}
    verdicts = {result.control: verdict_of(result) for result in matrix.results}
    tracked = "test/slug.test.js::slugifies every space"
    assert verdicts["noop"]["tracked"][tracked] == "failed"
    # node:assert and node:test are frozen in the test processes: the patched assertions
    # and the swallowing test() never take effect, so the pristine test still fails.
    assert verdicts["assert_monkeypatch"]["tracked"][tracked] == "failed"
    assert verdicts["report_forgery"]["tracked"][tracked] == "failed"
    assert verdicts["tests_edit_keep_names"]["tracked"][tracked] == "failed"
    assert "exit_handler" in {finding["rule"] for finding in verdicts["results_rewrite"]["tamper_findings"]}
    # A solution file named like a test, but not one the verifier restores, may not import
    # the runner: the static check names it (and node:test is frozen besides).
    assert ("src/slug_spec.cjs", "test_framework_internals") in {
        (finding["file"], finding["rule"]) for finding in verdicts["test_named_forgery"]["tamper_findings"]
    }
    assert verdicts["test_named_forgery"]["tracked"][tracked] == "failed"
    assert verdicts["reference"]["tamper_findings"] == []


@pytest.mark.parametrize("control", [ForgeRewardControl(), PytestHookControl(), EditTestsControl()])
def test_tamper_controls_fool_a_naive_in_place_pytest_run(
    engine: DockerEngine, python_trial: TrialTask, control: Control
) -> None:
    """The zeros above come from the verifier's defences: in place, each control wins."""
    action = control.action(python_trial.task_dir)
    with sandbox(
        engine.client,
        python_trial.image,
        role="agent",
        limits=ContainerLimits(),
        labels=engine.container_labels,
    ) as box:
        put_files(box, action.files)
        exec_with_deadline(box, action.script, timeout_s=60, workdir="/workspace")
        naive = exec_with_deadline(box, "python -m pytest -q", timeout_s=60, workdir="/workspace")
    assert naive.exit_code == 0, naive.output_tail


def test_tests_edit_fools_a_naive_node_run(engine: DockerEngine, node_trial: TrialTask) -> None:
    action = EditTestsControl().action(node_trial.task_dir)
    with sandbox(
        engine.client,
        node_trial.image,
        role="agent",
        limits=ContainerLimits(),
        labels=engine.container_labels,
    ) as box:
        exec_with_deadline(box, action.script, timeout_s=60, workdir="/workspace")
        naive = exec_with_deadline(box, "node --test", timeout_s=60, workdir="/workspace")
    assert naive.exit_code == 0, naive.output_tail


def test_agent_container_has_no_network_and_the_configured_limits(
    engine: DockerEngine, python_trial: TrialTask
) -> None:
    probe = ScriptControl(
        "probe",
        "ls /sys/class/net; cat /sys/fs/cgroup/memory/memory.limit_in_bytes; "
        "cat /sys/fs/cgroup/pids/pids.max; cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us; "
        "test -e /tests && echo tests-present || echo no-tests",
    )
    limits = ContainerLimits(memory="512m", cpus=0.5, pids=128)
    settings = engine.trial_settings().model_copy(update={"limits": limits})
    result = run_trial(engine, python_trial, probe, settings=settings)
    assert result.agent.output_tail.split() == ["lo", str(512 * 1024 * 1024), "128", "50000", "no-tests"]
    assert result.reward == 0.0


def test_agent_wall_clock_timeout_still_verifies(engine: DockerEngine, python_trial: TrialTask) -> None:
    settings = engine.trial_settings().model_copy(update={"agent_timeout_s": 2})
    result = run_trial(engine, python_trial, ScriptControl("sleeper", "sleep 100"), settings=settings)
    assert result.agent.timed_out
    assert result.agent.seconds < 20
    assert result.reward == 0.0


def test_only_the_submission_leaves_the_agent_container(engine: DockerEngine, python_trial: TrialTask) -> None:
    control = ScriptControl(
        "outside",
        "echo 1 > /logs-outside.txt; mkdir -p /opt/traj2env/pristine; "
        "echo 'def add(a, b): return a + b' > /opt/traj2env/pristine/calc.py",
    )
    result = run_trial(engine, python_trial, control)
    assert result.reward == 0.0
    assert result.verdict is not None
    assert result.verdict["tracked"]["tests/test_calc.py::test_add"] == "failed"


def test_containers_are_removed_when_the_verifier_phase_fails(
    engine: DockerEngine, python_trial: TrialTask, tmp_path: Path
) -> None:
    broken = TrialTask(image=python_trial.image, task_dir=tmp_path)  # no tests/ directory
    (tmp_path / "solution").mkdir()
    with pytest.raises(FileNotFoundError):
        run_trial(
            engine,
            broken,
            ScriptControl("noop-ish", "true"),
            run_id="verifier-fails",
        )
    remaining = engine.client.containers.list(all=True, filters={"label": f"{RUN_LABEL}=verifier-fails"})
    assert remaining == []


def test_an_interrupted_matrix_removes_every_container(engine: DockerEngine, python_trial: TrialTask) -> None:
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_matrix(
            engine,
            python_trial,
            [ScriptControl("slow", "sleep 120"), InterruptingControl(engine.client, "slow")],
            parallelism=2,
        )
    assert time.monotonic() - started < 60
    labelled = engine.client.containers.list(all=True, filters={"label": f"{CONTROL_LABEL}=slow"})
    assert labelled == []

"""``jobs`` > 1: ``traj2env generate`` runs its batches in worker processes at once.

Two sample sessions through the repair family (a lint fix, whose matrix is the smallest a
repair task has, and a unittest fix) make two batches of one trajectory with ``jobs`` 2. The proof of parallelism is the Dagster instance's own record of the runs
(their start and end times overlap), not wall time; the Docker pools' limits are checked
on the steps' start and end events across both runs; the report equals a ``jobs`` 1 run's.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import time
from pathlib import Path

import dagster as dg
import pytest
import yaml

from traj2env_assets.cli import dagster_instance, main
from traj2env_assets.config import RunSettings, load_run_config
from traj2env_assets.definitions import build_definitions
from traj2env_assets.defs.jobs import PIPELINE_JOB
from traj2env_assets.defs.llm import SPEND_SCOPE_TAG
from traj2env_assets.defs.pools import pool_limits
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.defs.run_liveness import IN_PROGRESS
from traj2env_assets.docker_engine.connection import connect
from traj2env_assets.layout import LEDGER_DIR
from traj2env_assets.llm.ledger import SpendLedgerFile
from traj2env_assets_tests.families.qa.sample import sample_reply
from traj2env_assets_tests.faults.killed_cli import (
    POINT_TIMEOUT_S,
    _children,
    _cmdline,
    leftovers,
    make_workdir,
    run_cli,
    start_cli,
)
from traj2env_assets_tests.llm.fake_provider import FakeProvider, FakeReply
from traj2env_assets_tests.llm.helpers import PRICED_MODEL

SAMPLES = Path(__file__).resolve().parents[1] / "examples" / "trajectories" / "atif"
SESSIONS = ["python-ruff-fix.json", "python-unittest-fix.json"]
STEP_ENDS = {dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE}


def _workdir(root: Path, jobs: int) -> Path:
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    for name in SESSIONS:
        shutil.copyfile(SAMPLES / name, sessions / name)
    config = {
        "source": {"kind": "trajectory", "path": str(sessions), "format": "auto"},
        "pipeline": {"name": "trajectory_to_env", "options": {"families": ["repair"], "jobs": jobs}},
        "output": {"destination": str(root / "tasks"), "org": "local", "dataset_name": "trajectory-tasks"},
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return root


def _generate(root: Path, *options: str) -> dict:
    command = ["generate", "--config", str(root / "config.yaml"), "--workspace", str(root / "workspace"), *options]
    assert main(command) == 0
    return json.loads((root / "tasks" / "report.json").read_text())


# What differs between two runs of the same work: when, how long, the command's spend scope id.
PER_RUN = {"generated_at", "llm_scope"}
TEST_RUNNER_TIME = re.compile(r"\bin \d+(?:\.\d+)?s\b")


def _without_timings(value: object) -> object:
    if isinstance(value, dict):
        return {
            key: _without_timings(item)
            for key, item in value.items()
            if key not in PER_RUN and not key.endswith("seconds")
        }
    if isinstance(value, list):
        return [_without_timings(item) for item in value]
    return value


def _comparable(report: dict, root: Path) -> object:
    """The report without timings and with its own folder named alike in both runs."""
    text = json.dumps(report).replace(str(root.resolve()), "<root>").replace(str(root), "<root>")
    # The test runners' own timings in calibration output: "2 failed in 0.43s", "Ran 4 tests in 0.005s".
    text = TEST_RUNNER_TIME.sub("in <time>s", text)
    return _without_timings(json.loads(text))


def _pipeline_runs(instance: dg.DagsterInstance) -> list[dg.RunRecord]:
    records = instance.get_run_records(dg.RunsFilter(job_name=PIPELINE_JOB))
    return sorted(records, key=lambda record: record.start_time or 0)


def _max_overlap(intervals: list[tuple[float, float]]) -> int:
    edges = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, step in edges:  # An end sorts before a start at the same instant.
        running += step
        peak = max(peak, running)
    return peak


def _step_pools(job: dg.JobDefinition) -> dict[str, str]:
    """The pool of every op in a pool, by step key (ops inside graphs included)."""
    pools = {}
    for handle in job.graph.iterate_node_handles():
        definition = job.graph.get_node(handle).definition
        if isinstance(definition, dg.OpDefinition) and definition.pool:
            pools[str(handle)] = definition.pool
    return pools


def _pool_steps(instance: dg.DagsterInstance, runs: list[dg.RunRecord], pools: dict[str, str]) -> dict[str, list]:
    """Each pool's steps across ``runs`` as (start, end) timestamps from the event log."""
    spans: dict[str, list[tuple[float, float]]] = {pool: [] for pool in set(pools.values())}
    for record in runs:
        started: dict[str, float] = {}
        for entry in instance.all_logs(record.dagster_run.run_id):
            event = entry.dagster_event
            if event is None or event.step_key is None:
                continue
            node = event.step_key.split("[")[0]
            if node not in pools:
                continue
            if event.event_type == dg.DagsterEventType.STEP_START:
                started[event.step_key] = entry.timestamp
            elif event.event_type in STEP_ENDS:
                spans[pools[node]].append((started.pop(event.step_key), entry.timestamp))
    return spans


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_jobs_2_runs_two_batches_at_once_within_the_pools_and_reports_as_jobs_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial = _workdir(tmp_path / "jobs1", jobs=1)
    parallel = _workdir(tmp_path / "jobs2", jobs=2)
    monkeypatch.setenv("DAGSTER_HOME", str(serial / "dagster_home"))
    serial_report = _generate(serial)
    monkeypatch.setenv("DAGSTER_HOME", str(parallel / "dagster_home"))
    parallel_report = _generate(parallel)
    trials = {path: path.stat().st_mtime_ns for path in (parallel / "workspace").rglob("trials.json")}
    rerun_report = _generate(parallel)

    assert _comparable(parallel_report, parallel) == _comparable(serial_report, serial)
    assert any(candidate["kept"] for candidate in parallel_report["candidates"])
    # The warm rerun ran no trial again (each trial matrix rewrites its trials.json) ...
    assert trials and {path: path.stat().st_mtime_ns for path in trials} == trials
    assert _comparable(rerun_report, parallel) == _comparable(parallel_report, parallel)

    settings = RunSettings.resolve(load_run_config(parallel / "config.yaml"), parallel / "workspace")
    job = build_definitions(PipelineResource.from_settings(settings)).resolve_job_def(PIPELINE_JOB)
    pools = _step_pools(job)
    with dagster_instance(parallel / "workspace") as instance:
        first, second, *rerun = _pipeline_runs(instance)
        # ... and is two runs of its own, after the two batches of the first command.
        assert len(rerun) == 2
        assert {run.dagster_run.tags.get("dagster/partition") for run in (first, second)} == set(
            instance.get_dynamic_partitions("trajectories")
        )
        # Both batches ran at once: each started before the other ended.
        assert first.start_time is not None and second.start_time is not None
        assert first.end_time is not None and second.end_time is not None
        assert second.start_time < first.end_time and first.start_time < second.end_time
        spans = _pool_steps(instance, [first, second], pools)
    limits = pool_limits(settings.options)
    assert spans and all(_max_overlap(intervals) <= limits[pool] for pool, intervals in spans.items())
    assert any(intervals for intervals in spans.values())


QA_SESSIONS = ["atif/python-hf-dataset-stats.json", "claude-code/python-hf-dataset-stats.jsonl"]
# gpt-4o-mini: 10,000 input tokens at $0.15/1M + 5,000 output at $0.60/1M.
QA_CALL_COST = 10_000 * 0.15e-6 + 5_000 * 0.60e-6


@pytest.mark.timeout(900)
def test_two_batches_in_two_processes_share_one_spend_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_provider: FakeProvider
) -> None:
    """Each worker process would make its batch's call if each had a cap of its own; the
    ledger of the command's spend scope lets the first call through and stops the other."""
    sessions = tmp_path / "sessions"
    for number, name in enumerate(QA_SESSIONS):
        (sessions / name).parent.mkdir(parents=True, exist_ok=True)
        # Two pieces of work (their scripts round differently): one session logged twice
        # would be one candidate, and only one call would be asked for.
        text = (SAMPLES.parent / name).read_text(encoding="utf-8")
        (sessions / name).write_text(text.replace(".round(3)", f".round({3 + number})"), encoding="utf-8")
    fake_provider.default = FakeReply(content=sample_reply(), prompt_tokens=10_000, completion_tokens=5_000, delay_s=1)
    # The worker processes inherit the environment: LiteLLM's OpenAI route reads its base from it.
    monkeypatch.setenv("OPENAI_API_BASE", fake_provider.api_base)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    config = {
        "source": {"kind": "trajectory", "path": str(sessions), "format": "auto"},
        "pipeline": {
            "name": "trajectory_to_env",
            "options": {
                "families": ["qa"],
                "jobs": 2,
                "propose_only": True,
                "max_llm_spend_usd": QA_CALL_COST / 2,
            },
        },
        "output": {"destination": str(tmp_path / "tasks"), "org": "local", "dataset_name": "trajectory-tasks"},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))

    report = _generate(tmp_path, "--llm", PRICED_MODEL)

    [ledger_file] = (tmp_path / "workspace" / LEDGER_DIR).glob("*.json")
    ledger = SpendLedgerFile.model_validate_json(ledger_file.read_text())
    reasons = sorted(str(candidate.get("reason")) for candidate in report["candidates"])
    assert len(report["inputs"]) == 2 and len(reasons) == 2, report
    assert fake_provider.request_count == ledger.usage.calls == 1
    assert ledger.usage.budget_exhausted == 1 and "budget_exhausted" in reasons
    assert ledger.usage.spend_usd == pytest.approx(QA_CALL_COST)
    with dagster_instance(tmp_path / "workspace") as instance:
        runs = _pipeline_runs(instance)
    assert len(runs) == 2 and len({run.dagster_run.tags[SPEND_SCOPE_TAG] for run in runs}) == 1


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _started_runs(home: Path) -> int:
    if not (home / "dagster.yaml").is_file():  # The command has not made its instance yet.
        return 0
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return len(instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])))


@pytest.mark.docker
@pytest.mark.timeout(1500)
def test_kill_9_of_a_jobs_2_command_kills_its_workers_and_the_rerun_finishes_the_work(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    work = make_workdir(tmp_path, user="parallel jobs")
    shutil.copyfile(SAMPLES / "python-unittest-fix.json", work.root / "sessions" / "python-unittest-fix.json")
    cli = start_cli(work)

    def kill_if_running() -> None:
        if cli.poll() is None:
            cli.kill()

    request.addfinalizer(kill_if_running)
    # Two worker processes start (each imports Dagster and LiteLLM) before the runs do.
    deadline = time.monotonic() + 3 * POINT_TIMEOUT_S
    # Two runs started at once, each in a worker process (a worker takes its run lock before
    # it creates its run, so the locks alone do not say the runs exist).
    while _started_runs(work.home) < 2:
        assert cli.poll() is None and time.monotonic() < deadline, (work.root / "cli.log").read_text()[-4000:]
        time.sleep(0.05)
    # Its children, not the resource tracker; not a grandchild either (a worker's fork of
    # Dagster's `tail -F` log capture carries the worker's command line until it execs).
    workers = [pid for pid in _children(cli.pid) if "spawn_main" in _cmdline(pid)]
    cli.send_signal(signal.SIGKILL)
    cli.wait(timeout=60)
    stopped = time.monotonic() + 30
    while any(_alive(pid) for pid in workers) and time.monotonic() < stopped:
        time.sleep(0.1)

    assert len(workers) == 2 and not any(_alive(pid) for pid in workers)
    run_cli(work)
    report = json.loads((work.tasks / "report.json").read_text())
    assert len(report["inputs"]) == 2 and any(candidate["kept"] for candidate in report["candidates"])
    assert leftovers(connect(), work) == {"containers": [], "orphaned_staging": [], "publishing": [], "run_locks": []}
    with dg.DagsterInstance.from_config(str(work.home)) as instance:
        in_progress = instance.get_run_records(dg.RunsFilter(statuses=IN_PROGRESS))
        failed = instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.FAILURE]))
    assert in_progress == [] and len(failed) >= 2

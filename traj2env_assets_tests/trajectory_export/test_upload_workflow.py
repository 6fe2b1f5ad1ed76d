"""upload.py's whole path against the fake platform: task diagnostic, push with a saved,
reconnectable operation, push failures, spec diagnostic; the context limits; privacy."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from trajectory import Client
from trajectory.lib import benchmark_submission

from traj2env_assets.trajectory_export import context
from traj2env_assets.trajectory_export.context import (
    ContextTooLargeError,
    check_context,
    context_size,
)
from traj2env_assets.trajectory_export.dockerfile import harness_dockerfile
from traj2env_assets.trajectory_export.export import upload_script
from traj2env_assets.trajectory_export.layout import (
    BENCHMARK_DIR,
    DOCKERFILE,
    OPERATION_FILE,
    TASK_INDEX_FILE,
)
from traj2env_assets.trajectory_export.push import build_benchmark
from traj2env_assets.trajectory_export.task_index import HarnessTask, TaskIndex
from traj2env_assets.trajectory_export.workflow import (
    UploadOutcome,
    UploadSettings,
    run_upload,
)
from traj2env_assets_tests.trajectory_export.fake_trajectory_platform import (
    API_KEY,
    FakeTrajectoryPlatform,
    running_platform,
)

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = {"alpha-build": "build", "beta-repair": "repair", "gamma-repair": "repair"}


@pytest.fixture
def spec_dir(tmp_path: Path) -> Path:
    """A small spec of our own: a Dockerfile, the task index and one payload file."""
    benchmark = tmp_path / "spec" / BENCHMARK_DIR
    benchmark.mkdir(parents=True)
    (benchmark / DOCKERFILE).write_text("FROM python:3.13-slim\nCOPY . /app/\n")
    (benchmark / "payload.txt").write_text("task files\n")
    tasks = {
        task_id: HarnessTask(
            task_id=task_id,
            family=family,
            source_trace=f"trace-{task_id}",
            split="train",
            agent_timeout_sec=60,
            verifier_timeout_sec=60,
            build_timeout_sec=60,
            workdir="/workspace",
            submission_path="/workspace",
        )
        for task_id, family in FAMILIES.items()
    }
    (benchmark / TASK_INDEX_FILE).write_text(TaskIndex(tasks=tasks).model_dump_json())
    return tmp_path / "spec"


def _upload(platform: FakeTrajectoryPlatform, spec: Path, **settings: object) -> tuple[UploadOutcome, str]:
    client = Client(api_key=API_KEY, base_url=platform.base_url, max_retries=0)
    out = io.StringIO()
    chosen = UploadSettings.model_validate(
        {
            "agent_name": "traj2env-test",
            "name": "traj2env sample",
            "poll_interval_s": 0.01,
            "operation_poll_s": 0.01,
            **settings,
        }
    )
    return run_upload(client, spec, chosen, out), out.getvalue()


def _count(platform: FakeTrajectoryPlatform, fragment: str) -> int:
    return sum(fragment in path for path in platform.paths())


def test_whole_path_diagnoses_a_task_pushes_privately_then_diagnoses_the_spec(spec_dir: Path) -> None:
    with running_platform() as platform:
        platform.task_outcomes = [
            {"status": "completed", "termination_reason": "ENV_DONE", "reward": 1.0, "failure": None},
            {"status": "completed", "termination_reason": "ENV_DONE", "reward": 0.0, "failure": None},
        ]
        outcome, printed = _upload(platform, spec_dir)
    paths = platform.paths()
    order = [
        next(i for i, p in enumerate(paths) if fragment in p)
        for fragment in (
            "GET /api/v1/agents/name/traj2env-test",
            "POST /api/v1/diagnostics/task/ingest",
            "POST /api/v1/diagnostics/task/run",
            "POST /api/v1/benchmark-ingestion/sessions",
            "POST /api/v1/diagnostics/benchmark/run",
        )
    ]
    assert order == sorted(order) and outcome.status == "ok"
    # The representative task is the first of the most common family, with its own runtime.
    (diagnosed,) = [bench["task"] for bench in platform.diagnostic_benches.values()]
    assert diagnosed["name"] == "beta-repair" and diagnosed["runtime"]["source"]["dockerfile_path"] == DOCKERFILE
    (op,) = platform.ingestions
    assert platform.ingestions[op]["session"]["metadata"]["visibility"] == "private"
    assert json.loads((spec_dir / OPERATION_FILE).read_text())["operation_id"] == op == outcome.operation_id
    assert _count(platform, "/diagnostics/diag_") >= 4  # polled (running first), then read
    assert outcome.benchmark_diagnostic is not None and len(outcome.benchmark_diagnostic.tasks) == 3
    # Every task's outcome is printed: id, status, ending, reward.
    assert "task_beta-repair completed ending=ENV_DONE reward=1" in printed
    for name, reward in (("alpha-build", "1"), ("beta-repair", "0"), ("gamma-repair", "1")):
        assert f"task_{name} completed ending=ENV_DONE reward={reward}" in printed
    assert f"bench_id {outcome.bench_id}" in printed


def test_a_failed_task_diagnostic_stops_before_the_push(spec_dir: Path) -> None:
    with running_platform() as platform:
        platform.task_outcomes = [
            {
                "status": "failed",
                "termination_reason": "ERROR",
                "reward": None,
                "failure": {"code": "harness_exception", "summary": "verifier crashed"},
            }
        ]
        outcome, printed = _upload(platform, spec_dir)
    assert outcome.status == "task_diagnostic_failed" and not platform.ingestions
    assert "task_beta-repair failed ending=ERROR reward=none" in printed and "verifier crashed" in printed
    assert not (spec_dir / OPERATION_FILE).exists()


def test_a_failed_image_build_in_the_task_diagnostic_is_printed(spec_dir: Path) -> None:
    with running_platform() as platform:
        platform.image_build_status = "failed"
        outcome, printed = _upload(platform, spec_dir)
    assert outcome.status == "task_diagnostic_failed" and not platform.ingestions
    assert "benchmark_image_build_failed" in printed and "beta-repair" in printed


def test_a_failed_push_prints_its_failures_and_runs_no_spec_diagnostic(spec_dir: Path) -> None:
    with running_platform() as platform:
        platform.ingestion_status = "failed"
        platform.ingestion_failures = [
            {
                "stage": "building",
                "resource_type": "runtime",
                "resource_id": "rt_1",
                "code": "image_build_failed",
                "message": "apt-get: docker-compose not found",
                "retryable": False,
                "resolved": False,
            }
        ]
        outcome, printed = _upload(platform, spec_dir, task_diagnostic=False)
    assert outcome.status == "push_failed" and _count(platform, "/diagnostics/") == 0
    assert outcome.push_failures == ["building runtime rt_1: image_build_failed: apt-get: docker-compose not found"]
    assert "push failed: Benchmark operation" in printed and "docker-compose not found" in printed
    assert not (spec_dir / OPERATION_FILE).exists()  # a failed version is not resumed


def test_a_rerun_reconnects_to_the_saved_operation_without_uploading_again(spec_dir: Path) -> None:
    with running_platform() as platform:
        platform.ingestion_status = "running"
        first, printed = _upload(platform, spec_dir, push_timeout_s=0)
        assert first.status == "push_pending" and "run upload.py again" in printed
        saved = json.loads((spec_dir / OPERATION_FILE).read_text())["operation_id"]
        assert saved == first.operation_id
        uploads = _count(platform, "PUT /_blob/bench/")
        platform.ingestion_status = "succeeded"
        second, printed = _upload(platform, spec_dir)
    assert second.status == "ok" and second.reconnected and second.operation_id == saved
    assert f"reconnecting to push operation {saved}" in printed
    assert platform.paths().count("POST /api/v1/benchmark-ingestion/sessions") == 1
    assert _count(platform, "PUT /_blob/bench/") == uploads
    assert _count(platform, "/diagnostics/task/run") == 1  # the task diagnostic ran once, before the push
    assert f"GET /api/v1/benchmark-ingestion/operations/{saved}" in platform.paths()
    assert second.benchmark_diagnostic is not None and second.benchmark_diagnostic.passed


def test_a_changed_spec_pushes_anew_instead_of_reconnecting(spec_dir: Path) -> None:
    with running_platform() as platform:
        _upload(platform, spec_dir, task_diagnostic=False, benchmark_diagnostic=False)
        (spec_dir / BENCHMARK_DIR / "payload.txt").write_text("re-exported\n")
        outcome, printed = _upload(platform, spec_dir, task_diagnostic=False, benchmark_diagnostic=False)
    assert not outcome.reconnected and "pushing anew" in printed and len(platform.ingestions) == 2


def test_private_by_default_public_only_when_asked(spec_dir: Path) -> None:
    assert build_benchmark(spec_dir).visibility == "private"
    assert UploadSettings(agent_name="a").visibility == "private"
    with running_platform() as platform:
        _upload(platform, spec_dir, visibility="public", task_diagnostic=False, benchmark_diagnostic=False)
    (ingestion,) = platform.ingestions.values()
    assert ingestion["session"]["metadata"]["visibility"] == "public"


def test_generated_upload_script_is_private_unless_public_is_passed(spec_dir: Path) -> None:
    (spec_dir / "upload.py").write_text(upload_script("traj2env sample"))
    with running_platform() as platform:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "TRAJECTORY_API_KEY": API_KEY,
            "TRAJECTORY_BASE_URL": platform.base_url,
        }
        for extra in ([], ["--public"]):
            completed = subprocess.run(
                [
                    sys.executable,
                    str(spec_dir / "upload.py"),
                    "--agent-name",
                    "traj2env-test",
                    "--skip-task-diagnostic",
                    "--skip-spec-diagnostic",
                    *extra,
                ],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
                check=False,
            )
            assert completed.returncode == 0, completed.stderr[-2000:]
            assert "result: ok, bench_id bench_" in completed.stdout
            (spec_dir / OPERATION_FILE).unlink()
    assert [i["session"]["metadata"]["visibility"] for i in platform.ingestions.values()] == ["private", "public"]
    assert {i["session"]["bench_name"] for i in platform.ingestions.values()} == {"traj2env sample"}


def test_context_limits_are_the_notes_and_the_sdks() -> None:
    assert context.MAX_CONTEXT_FILES == 4096 == benchmark_submission.MAX_RUNTIME_CONTEXT_FILES
    assert context.MAX_CONTEXT_BYTES == 3 * 1024**3 == benchmark_submission.MAX_FILE_SIZE_BYTES


def test_a_context_over_the_file_limit_is_refused_before_anything_is_sent(spec_dir: Path) -> None:
    extra = spec_dir / BENCHMARK_DIR / "many"
    extra.mkdir()
    for i in range(4096):
        (extra / f"f{i}").touch()
    with pytest.raises(ContextTooLargeError, match=r"4,099 files \(limit 4,096\)"):
        check_context(spec_dir / BENCHMARK_DIR)
    with running_platform() as platform, pytest.raises(ContextTooLargeError, match="too large"):
        _upload(platform, spec_dir)
    assert platform.requests == []
    # A root .dockerignore, which the SDK applies, brings it back under the limit.
    (spec_dir / BENCHMARK_DIR / ".dockerignore").write_text("many/\n")
    assert check_context(spec_dir / BENCHMARK_DIR).files == 4


def test_a_context_over_three_gib_is_refused(spec_dir: Path) -> None:
    benchmark = spec_dir / BENCHMARK_DIR
    others = context_size(benchmark).bytes
    big = benchmark / "base-image.tar"
    with open(big, "wb") as handle:  # sparse files: sizes up to 3 GiB, no disk written
        handle.truncate(context.MAX_CONTEXT_BYTES - others)
    assert check_context(benchmark).bytes == context.MAX_CONTEXT_BYTES  # at the limit: accepted
    with open(big, "r+b") as handle:
        handle.truncate(context.MAX_CONTEXT_BYTES - others + 1)
    with pytest.raises(ContextTooLargeError, match=r"3,221,225,473 bytes \(limit 3,221,225,472, 3 GiB\)"):
        check_context(benchmark)


def test_harness_image_installs_and_checks_docker_compose() -> None:
    dockerfile = harness_dockerfile()
    install = dockerfile.split("apt-get install", 1)[1].split("&&", 1)[0]
    assert {"docker.io", "docker-cli", "docker-compose"} <= set(install.split())
    assert "docker compose version" in dockerfile and "dockerd --version" in dockerfile

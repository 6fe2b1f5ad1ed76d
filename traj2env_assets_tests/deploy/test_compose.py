"""The compose deployment end to end, on the real Docker engine: PostgreSQL, the code server,
the webserver, the daemon, and runs in containers launched by the DockerRunLauncher.

A run launched through the GraphQL API publishes one sample (queued while the daemon is
down, the daemon restarted while it runs); a second sample dropped into the watched folder
is published by the sensor's run, and the report refreshes after it; the events are in
PostgreSQL; the UI shows it all in a real browser; ``down`` leaves nothing behind.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from traj2env_assets.definitions import defs
from traj2env_assets.layout import Workspace
from traj2env_assets.sources import register_sources
from traj2env_assets_tests.deploy.browser import chromium
from traj2env_assets_tests.deploy.deployment import WORKSPACE, Deployment

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(2400)]

SAMPLES = Path(__file__).resolve().parents[2] / "examples" / "trajectories"
# Node repair sessions: one kept repair task each and no build or extend candidate, so a
# run's Docker work is one image, one calibration and one trial matrix.
GRAPHQL_SAMPLE = SAMPLES / "claude-code" / "node-npm-test-fix.jsonl"
SENSOR_SAMPLE = SAMPLES / "codex" / "node-describe-fix.jsonl"
RUN_TIMEOUT = 900


def partition_key(sample: Path, tmp_path: Path) -> str:
    folder = tmp_path / sample.stem
    folder.mkdir()
    shutil.copy(sample, folder)
    return register_sources(Workspace(root=tmp_path / f"{sample.stem}-ws"), folder).new[0]


def published(deployment: Deployment, key: str) -> list[dict]:
    statuses = deployment.json_in_workspace(f"candidates/repair/{key}/*/status.json")
    return [status for status in statuses if status.get("reached") == "publish" and not status.get("drop")]


def assert_task_files(deployment: Deployment, task: dict) -> None:
    path = task["published_path"]
    assert path.startswith(f"{WORKSPACE}/trajectory-tasks/"), path
    deployment.exec("user_code", "test", "-f", f"{path}/task.toml")
    deployment.exec("user_code", "test", "-f", f"{path}/tests/test.sh")


def materialized_events(deployment: Deployment, run_id: str) -> int:
    return int(
        deployment.psql(
            f"select count(*) from event_logs where run_id = '{run_id}' and dagster_event_type = 'ASSET_MATERIALIZATION'"
        )
    )


def test_graphql_run_queues_while_the_daemon_is_down_survives_its_restart_and_publishes(
    deployment: Deployment, tmp_path: Path
) -> None:
    key = partition_key(GRAPHQL_SAMPLE, tmp_path)
    deployment.add_partition(key)
    shutil.copy(GRAPHQL_SAMPLE, deployment.inbox / GRAPHQL_SAMPLE.name)

    deployment.compose("stop", "daemon")
    run_id = deployment.client().submit_job_execution(
        "trajectory_pipeline",
        repository_location_name="traj2env",
        repository_name="__repository__",
        tags={"dagster/partition": key},
    )
    time.sleep(5)
    assert deployment.run_status(run_id) == "QUEUED", "nothing dequeues while the daemon is down"

    deployment.compose("start", "daemon")
    assert deployment.wait_for_status(run_id, {"STARTED", "SUCCESS", "FAILURE"}, timeout=300) == "STARTED"
    deployment.compose("restart", "daemon", timeout=120)
    assert deployment.wait_for_status(run_id, {"SUCCESS", "FAILURE", "CANCELED"}, timeout=RUN_TIMEOUT) == "SUCCESS"

    [task] = published(deployment, key)
    assert task["trials"]["rewards"]["reference"] == 1.0
    assert all(reward == 0.0 for name, reward in task["trials"]["rewards"].items() if name != "reference")
    assert_task_files(deployment, task)
    assert deployment.psql(f"select status from runs where run_id = '{run_id}'") == "SUCCESS"
    assert materialized_events(deployment, run_id) >= 9, "every stage's materialization is in PostgreSQL"


def sensor_sample_run(deployment: Deployment, tmp_path: Path) -> tuple[str, dict]:
    """The sensor's run of the second sample (the sample is dropped into the inbox first, once)."""
    key = partition_key(SENSOR_SAMPLE, tmp_path)
    target = deployment.inbox / SENSOR_SAMPLE.name
    if not target.exists():
        shutil.copy(SENSOR_SAMPLE, target)
    return key, deployment.wait_for_run(
        RUN_TIMEOUT, dagster__sensor_name="trajectory_folder_sensor", dagster__partition=key
    )


def test_a_file_dropped_into_the_watched_folder_is_published_by_the_sensors_run(
    deployment: Deployment, tmp_path: Path
) -> None:
    dropped = time.time()
    key, run = sensor_sample_run(deployment, tmp_path)
    assert run["status"] == "SUCCESS" and run["jobName"] == "trajectory_pipeline"
    assert run["creationTime"] >= dropped - 1
    [task] = published(deployment, key)
    assert_task_files(deployment, task)
    assert materialized_events(deployment, run["runId"]) >= 9

    # The GraphQL sample's partition was added by hand: the sensor adopts it, it never reruns it.
    sensor_runs = deployment.runs(dagster__sensor_name="trajectory_folder_sensor")
    assert [r["tags"]["dagster/partition"] for r in sensor_runs] == [key]

    # This run's report, requested once it ended; the GraphQL run's may be requested late
    # (its sensor tick can come after this run was created) and would not list this one.
    report = deployment.wait_for_run(RUN_TIMEOUT, after=run["endTime"], dagster__sensor_name="report_refresh_sensor")
    assert report["status"] == "SUCCESS" and report["jobName"] == "run_report_job"
    [document] = deployment.json_in_workspace("trajectory-tasks/report.json")
    published_keys = {c["partition_key"] for c in document["candidates"] if c["status"] == "published"}
    assert key in published_keys


def test_the_ui_in_a_real_browser_shows_every_stage_and_a_partitions_candidates_and_trial_matrix(
    deployment: Deployment, tmp_path: Path
) -> None:
    key, run = sensor_sample_run(deployment, tmp_path)
    assert run["status"] == "SUCCESS"
    [task] = published(deployment, key)
    groups: dict[str, list[str]] = {}
    for asset in defs.resolve_asset_graph().asset_nodes:
        # The graph names a node by its key's last part (`candidates/qa` is drawn as `qa`).
        groups.setdefault(asset.group_name, []).append(asset.key.path[-1])
    screenshots = tmp_path / "screenshots"
    screenshots.mkdir()
    with chromium(deployment.url, screenshots) as page:
        for group, assets in sorted(groups.items()):
            page.open(f"/locations/traj2env/asset-groups/{group}", expect=assets, screenshot=f"group-{group}")
        trials = page.open(
            f"/assets/trials?view=partitions&partition={key}",
            screenshot="trials-partition",
            expect=["candidate_table", task["task_id"], "reference=1", "report_forgery=0"],
        )
        assert "passed_trials" in trials or "published" in trials
        page.open(
            f"/assets/publish?view=partitions&partition={key}",
            screenshot="published-partition",
            expect=["candidate_table", task["task_id"], "published_path"],
        )
        page.open("/assets/report", expect=["funnel", "skip_reasons"], screenshot="run-report")
    shown = sorted(path.name for path in screenshots.glob("*.png"))
    assert len(shown) == len(groups) + 3, shown

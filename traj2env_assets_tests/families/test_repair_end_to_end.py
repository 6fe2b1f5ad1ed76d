"""The README's main command on the bundled samples, against the real Docker engine and Harbor.

It emits one repair task per positive sample (12), drops the negative ones with their
reasons, and Harbor's own `harbor run` scores every emitted task 1.0 with the oracle
and 0.0 with the no-op agent. A rerun of unchanged inputs builds nothing and runs no trial.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from traj2env_assets.docker_engine.controls import DEFAULT_CONTROLS
from traj2env_assets.cli import main
from traj2env_assets.harbor.no_network_environment import IMPORT_PATH
from traj2env_assets_tests.families.conftest import EXAMPLES

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HARBOR = Path(sys.executable).parent / "harbor"
EXAMPLE_CONFIG = EXAMPLES.parent / "trajectory-to-env.yaml"
POSITIVE = {"python-pytest-fix", "node-npm-test-fix", "python-unittest-fix"}


def _generate(config: Path, workspace: Path) -> dict:
    assert main(["generate", "--config", str(config), "--workspace", str(workspace)]) == 0
    return json.loads((Path(yaml.safe_load(config.read_text())["output"]["destination"]) / "report.json").read_text())


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("e2e")
    config = yaml.safe_load(EXAMPLE_CONFIG.read_text())
    config["source"]["path"] = str(EXAMPLES)
    config["output"]["destination"] = str(root / "tasks")
    config_path = root / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    previous = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(root / "dagster_home")
    try:
        first = _generate(config_path, root / "workspace")
        trial_files = {p: p.stat().st_mtime_ns for p in (root / "workspace").rglob("trials.json")}
        second = _generate(config_path, root / "workspace")
    finally:
        if previous is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = previous
    return {"root": root, "first": first, "second": second, "trial_files": trial_files}


def test_every_positive_sample_becomes_a_task_and_negatives_are_dropped(run: dict) -> None:
    report = run["first"]
    by_source = {}
    for candidate in report["candidates"]:
        source = next(i["path"] for i in report["inputs"] if i["partition_key"] == candidate["partition_key"])
        by_source[Path(source).stem] = by_source.get(Path(source).stem, []) + [candidate]
    kept = sorted(stem for stem, cands in by_source.items() if all(c["kept"] for c in cands))
    assert kept == sorted(POSITIVE)
    published = [c for c in report["candidates"] if c["kept"]]
    assert len(published) == 12
    for candidate in published:
        rewards = candidate["trial_rewards"]
        # The task's whole matrix ran: the reference scores 1, every control 0.
        task_dir = Path(candidate["published_path"])
        assert set(rewards) == {control.name for control in DEFAULT_CONTROLS if control.applies_to(task_dir)}
        assert rewards.pop("reference") == 1.0 and set(rewards.values()) == {0.0}
        assert (Path(candidate["published_path"]) / "task.toml").is_file()
    dropped = [c for c in report["candidates"] if not c["kept"]]
    assert len(dropped) == 12 and {c["reason"] for c in dropped} == {"fix_changes_check_config"}
    assert report["funnel"]["published"] == 12


def test_rerun_of_unchanged_inputs_builds_nothing_and_runs_no_trial(run: dict) -> None:
    second = run["second"]
    assert [c["task_id"] for c in second["candidates"] if c["kept"]] == [
        c["task_id"] for c in run["first"]["candidates"] if c["kept"]
    ]
    workspace = run["root"] / "workspace"
    statuses = [json.loads(p.read_text()) for p in workspace.rglob("status.json")]
    assert [s["image"]["built"] for s in statuses if s.get("image")] == [False] * 12
    assert {p: p.stat().st_mtime_ns for p in workspace.rglob("trials.json")} == run["trial_files"]


def _harbor_rewards(dataset: Path, agent: str, jobs: Path) -> dict[str, float]:
    argv = [str(HARBOR), "run", "-p", str(dataset), "-a", agent, "-e", IMPORT_PATH,
            "--jobs-dir", str(jobs), "--job-name", agent, "-n", "2"]
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=1800, env={**os.environ, "HARBOR_TELEMETRY": "0"})
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = [json.loads(p.read_text()) for p in (jobs / agent).glob("*/result.json")]
    return {r["task_name"]: r["verifier_result"]["rewards"]["reward"] for r in results}


def test_harbor_oracle_scores_one_and_nop_zero_on_every_emitted_task(run: dict) -> None:
    dataset = run["root"] / "tasks"
    tasks = sorted(p.name for p in dataset.iterdir() if p.is_dir())
    assert len(tasks) == 12
    oracle = _harbor_rewards(dataset, "oracle", run["root"] / "jobs")
    nop = _harbor_rewards(dataset, "nop", run["root"] / "jobs")
    assert sorted(oracle.values()) == [1.0] * 12
    assert sorted(nop.values()) == [0.0] * 12

"""No false positive on a normal task: the main command on one bundled sample (a repair
task whose image installs PyPI wheels, with its behaviour gate) publishes it with nothing
redacted, and a scan of the published directory — Dockerfile, task.toml, the harness, the
gate's cases — finds nothing. A finding here would drop good tasks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from traj2env_assets.cli import main
from traj2env_assets.harbor.secrets import SECRET_IN_TASK, scan_task_dir
from traj2env_assets_tests.example_run import SAMPLES

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SAMPLE = "claude-code/python-deps-pytest-fix.jsonl"


def test_a_published_sample_task_has_no_secret_finding(tmp_path: Path) -> None:
    source = tmp_path / "sessions"
    source.mkdir()
    shutil.copy(SAMPLES / SAMPLE, source)
    config = tmp_path / "config.yaml"
    config.write_text(
        f"source:\n  kind: trajectory\n  path: {source}\n  format: auto\n"
        "pipeline:\n  name: trajectory_to_env\n  options:\n    families: [repair]\n"
        f"output:\n  destination: {tmp_path / 'tasks'}\n  org: local\n  dataset_name: samples\n"
    )
    assert main(["generate", "--config", str(config), "--workspace", str(tmp_path / "ws")]) == 0
    report = json.loads((tmp_path / "tasks" / "report.json").read_text())
    published = [candidate for candidate in report["candidates"] if candidate["kept"]]
    assert len(published) == 1, report["candidates"]
    task_dir = Path(published[0]["published_path"])
    assert (task_dir / "environment" / "wheels").is_dir() and (task_dir / "tests" / "traj2env").is_dir()
    assert scan_task_dir(task_dir) == []
    assert "redactions" not in published[0]["facts"]
    assert SECRET_IN_TASK not in report["totals_by_reason"]

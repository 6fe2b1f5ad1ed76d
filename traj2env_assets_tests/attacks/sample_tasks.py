"""The published sample tasks the attacks run against: one per sample project.

``traj2env generate`` (the README's main command) runs on a copy of the bundled example
config whose source holds one positive session per project (the Claude Code ones), so the
tasks are exactly what the pipeline publishes, trial matrix included.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from traj2env_assets.cli import main
from traj2env_assets_tests.attacks.model import Runner

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SESSIONS: dict[Runner, str] = {
    Runner.PYTEST: "claude-code/python-pytest-fix.jsonl",
    Runner.UNITTEST: "claude-code/python-unittest-fix.jsonl",
    Runner.NODE: "claude-code/node-npm-test-fix.jsonl",
}


class SampleTaskError(RuntimeError):
    """The pipeline did not publish one task per sample project."""


def publish_sample_tasks(root: Path) -> dict[Runner, Path]:
    """Run ``traj2env generate`` into ``root``; the published task directory per runner."""
    sessions = root / "sessions"
    for relative in SESSIONS.values():
        shutil.copyfile(EXAMPLES / "trajectories" / relative, _mkparent(sessions / relative))
    config = yaml.safe_load((EXAMPLES / "trajectory-to-env.yaml").read_text())
    config["source"]["path"] = str(sessions)
    config["output"]["destination"] = str(root / "tasks")
    config_path = root / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("DAGSTER_HOME", str(root / "dagster_home"))
        code = main(["generate", "--config", str(config_path), "--workspace", str(root / "workspace")])
    tasks = published_sample_tasks(root)
    if code != 0 or len(tasks) != len(Runner):
        candidates = json.loads((root / "tasks" / "report.json").read_text())["candidates"]
        summary = [{k: c.get(k) for k in ("task_id", "kept", "reason", "detail", "trial_rewards")} for c in candidates]
        raise SampleTaskError(f"traj2env generate exited {code}, published {tasks}; candidates: {summary}")
    return tasks


def published_sample_tasks(root: Path) -> dict[Runner, Path]:
    """The task directories a ``publish_sample_tasks(root)`` run published, by runner."""
    report = json.loads((root / "tasks" / "report.json").read_text())
    source_of = {item["partition_key"]: Path(item["path"]).name for item in report["inputs"]}
    published = {
        source_of[candidate["partition_key"]]: Path(candidate["published_path"])
        for candidate in report["candidates"]
        if candidate["kept"]
    }
    return {
        runner: published[Path(session).name]
        for runner, session in SESSIONS.items()
        if Path(session).name in published
    }


def _mkparent(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path

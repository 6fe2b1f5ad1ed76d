"""The README's main command on the bundled samples, run once per test session.

``traj2env generate`` runs the example config (every family) on every sample session twice
(the second run must find everything cached). The end-to-end tests read both reports, and
the attack suite attacks the repair tasks this run published: the tasks are exactly what
the pipeline publishes, and the costliest Docker work of the suite is done once.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from traj2env_assets.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE_CONFIG = EXAMPLES / "trajectory-to-env.yaml"


class ExampleRun(BaseModel):
    root: Path
    first: dict
    second: dict
    # Every trials.json of the workspace after the first run, with its mtime.
    trial_files: dict[Path, int]
    seconds: tuple[float, float]

    def timing(self) -> str:
        first, second = self.seconds
        return f"traj2env generate on {len(self.first['inputs'])} samples: {first:.1f} s, rerun {second:.1f} s"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def tasks(self) -> Path:
        return self.root / "tasks"

    def published(self, family: str, session: str) -> Path | None:
        """The task the first run published for ``session`` (``<format>/<file>`` under the
        samples folder) in ``family``, if any."""
        source = {item["partition_key"]: item["path"] for item in self.first["inputs"]}
        for candidate in self.first["candidates"]:
            path = Path(source[candidate["partition_key"]])
            if candidate["kept"] and candidate["family"] == family and path.parts[-2:] == Path(session).parts:
                return Path(candidate["published_path"])
        return None


def run_examples(root: Path) -> ExampleRun:
    config = yaml.safe_load(EXAMPLE_CONFIG.read_text())
    config["source"]["path"] = str(EXAMPLES / "trajectories")
    config["output"]["destination"] = str(root / "tasks")
    config_path = root / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("DAGSTER_HOME", str(root / "dagster_home"))
        started = time.monotonic()
        first = _generate(config_path, root)
        first_seconds = time.monotonic() - started
        trial_files = {p: p.stat().st_mtime_ns for p in (root / "workspace").rglob("trials.json")}
        second = _generate(config_path, root)
    return ExampleRun(
        root=root, first=first, second=second, trial_files=trial_files,
        seconds=(first_seconds, time.monotonic() - started - first_seconds),
    )


def _generate(config: Path, root: Path) -> dict:
    code = main(["generate", "--config", str(config), "--workspace", str(root / "workspace")])
    report = json.loads((root / "tasks" / "report.json").read_text())
    assert code == 0, [
        {k: c.get(k) for k in ("task_id", "kept", "reason", "detail")} for c in report["candidates"]
    ]
    return report

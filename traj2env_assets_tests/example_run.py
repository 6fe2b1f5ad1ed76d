"""The README's main command on the bundled samples, run once per test session.

``traj2env generate`` runs the example config (every family) on every sample session twice
(the second run must find everything cached). The end-to-end tests read both reports, and
the honest solutions are tried on the tasks this run published: the tasks are exactly
what the pipeline publishes, and the costliest Docker work of the suite is done once.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from traj2env_assets.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE_CONFIG = EXAMPLES / "trajectory-to-env.yaml"
SAMPLES = EXAMPLES / "trajectories"
REPORT = Path("tasks") / "report.json"


class ExampleRun(BaseModel):
    root: Path
    first: dict
    second: dict | None
    # Every trials.json of the workspace after the first run, with its mtime.
    trial_files: dict[Path, int]
    seconds: tuple[float, float | None]

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def tasks(self) -> Path:
        return self.root / "tasks"

    def published(self, family: str, session: str) -> Path | None:
        return published_task(self.first, family, session)

    def timing(self) -> str:
        first, second = self.seconds
        rerun = f", rerun {second:.1f} s" if second is not None else ""
        return f"traj2env generate on {len(self.first['inputs'])} samples: {first:.1f} s{rerun}"


def published_task(report: dict, family: str, session: str) -> Path | None:
    """The task a run's ``report`` says it published for ``session`` (``<format>/<file>``
    under the samples folder) in ``family``, if any: the session's own, or the one its
    candidate is a duplicate of (one session logged in four formats is one task)."""
    source = {item["partition_key"]: item["path"] for item in report["inputs"]}
    kept = {c["task_id"]: c for c in report["candidates"] if c["kept"] and c["family"] == family}
    for candidate in report["candidates"]:
        path = Path(source[candidate["partition_key"]])
        if candidate["family"] != family or path.parts[-2:] != Path(session).parts:
            continue
        if (task := kept.get(candidate["task_id"]) or kept.get(candidate.get("duplicate_of") or "")) is not None:
            return Path(task["published_path"])
    return None


def read_report(root: Path) -> dict:
    """The report of an earlier :func:`run_examples` into ``root``."""
    return json.loads((root / REPORT).read_text())


def run_examples(
    root: Path,
    *,
    sessions: Iterable[str] | None = None,
    families: list[str] | None = None,
    rerun: bool = True,
    source: Path | None = None,
    repositories: str | list[dict] | None = None,
) -> ExampleRun:
    """The example config run into ``root``: on every sample, on ``sessions`` only or on the
    folder ``source`` (sessions of a test's own making), with every family or ``families``,
    with ``source.repositories`` when given, and (``rerun``) a second time."""
    config = yaml.safe_load(EXAMPLE_CONFIG.read_text())
    if source is None:
        source = SAMPLES if sessions is None else _copied(sessions, root / "sessions")
    config["source"]["path"] = str(source)
    if repositories is not None:
        config["source"]["repositories"] = repositories
    config["output"]["destination"] = str(root / REPORT.parent)
    if families is not None:
        config["pipeline"]["options"]["families"] = families
    config_path = root / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("DAGSTER_HOME", str(root / "dagster_home"))
        started = time.monotonic()
        first = _generate(config_path, root)
        first_seconds = time.monotonic() - started
        trial_files = {p: p.stat().st_mtime_ns for p in (root / "workspace").rglob("trials.json")}
        second = _generate(config_path, root) if rerun else None
    return ExampleRun(
        root=root,
        first=first,
        second=second,
        trial_files=trial_files,
        seconds=(first_seconds, time.monotonic() - started - first_seconds if rerun else None),
    )


def _copied(sessions: Iterable[str], folder: Path) -> Path:
    for session in sessions:
        target = folder / session
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLES / session, target)
    return folder


def _generate(config: Path, root: Path) -> dict:
    code = main(["generate", "--config", str(config), "--workspace", str(root / "workspace")])
    report = read_report(root)
    assert code == 0, [{k: c.get(k) for k in ("task_id", "kept", "reason", "detail")} for c in report["candidates"]]
    return report

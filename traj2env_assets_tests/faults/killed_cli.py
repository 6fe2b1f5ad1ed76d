"""``traj2env generate`` as a subprocess on a small workspace of its own, killed at a
chosen point of its work, and the checks on what a rerun leaves (used by
``test_killed_cli.py`` and ``benchmarks/rerun_after_kill.py``).

The workspace: one bundled sample session (a Python lint repair task: ruff) through the
repair family, so each run builds one image, calibrates it and runs one trial matrix (the
six lint controls: the smallest matrix a repair task has, and the recovery under test is
the same for any).
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors
import yaml
from pydantic import BaseModel

from traj2env_assets.docker_engine.labels import ROLE_LABEL, RUN_LOCK_LABEL
from traj2env_assets.docker_engine.prune import our_containers
from traj2env_assets.layout import Workspace
from traj2env_assets.lifecycle.status import CandidateStatus
from traj2env_assets.run_locks import RUN_LOCK_DIR
from traj2env_assets.stages.report.orphaned_staging import orphaned_staging_dirs

REPO = Path(__file__).resolve().parents[2]
SESSION = REPO / "examples" / "trajectories" / "atif" / "python-ruff-fix.json"
POINT_TIMEOUT_S = 240
RUN_TIMEOUT_S = 600
_POLL_S = 0.05


class Workdir(BaseModel):
    """One CLI workspace: its config, Dagster instance, stage files and published tasks."""

    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config.yaml"

    @property
    def home(self) -> Path:
        return self.root / "dagster_home"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def tasks(self) -> Path:
        return self.root / "tasks"


# The sample's module docstring (and project description), which every copy of the session
# marks with its user's name: the task image is content-addressed, so each user gets an
# image of its own. The kill tests remove theirs to force a build; sharing one with the
# examples run (or another module on another xdist worker) made that run rebuild it, or
# found it built.
_DOCSTRING = "Stock levels per product, and what to reorder."


def make_workdir(root: Path, user: str = "fault tests") -> Workdir:
    work = Workdir(root=root)
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    text = SESSION.read_text()
    assert _DOCSTRING in text
    (sessions / SESSION.name).write_text(text.replace(_DOCSTRING, f"{_DOCSTRING[:-1]} ({user})."))
    config = {
        "source": {"kind": "trajectory", "path": str(sessions), "format": "auto"},
        "pipeline": {"name": "trajectory_to_env", "options": {"families": ["repair"], "jobs": 2}},
        "output": {"destination": str(work.tasks), "org": "local", "dataset_name": "trajectory-tasks"},
    }
    work.config.write_text(yaml.safe_dump(config))
    return work


def start_cli(work: Workdir, *options: str) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "traj2env_assets.cli",
        "generate",
        "--config",
        str(work.config),
        "--workspace",
        str(work.workspace),
        *options,
    ]
    env = {**os.environ, "DAGSTER_HOME": str(work.home), "PYTHONPATH": os.pathsep.join(sys.path)}
    log = (work.root / "cli.log").open("ab")
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO)


def run_cli(work: Workdir) -> float:
    """A whole run; returns its seconds (exit code 0 asserted)."""
    started = time.monotonic()
    process = start_cli(work)
    code = process.wait(timeout=RUN_TIMEOUT_S)
    assert code == 0, (work.root / "cli.log").read_text()[-4000:]
    return time.monotonic() - started


# How each kill point is recognised, polled every 50 ms:
def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    return parents


def _children(pid: int) -> list[int]:
    return [child for child, ppid in _parents().items() if ppid == pid]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _building(work: Workdir) -> bool:
    """A ``docker buildx build`` running on a build context under ``work``."""
    root = str(work.root)
    pids = (int(path.name) for path in Path("/proc").glob("[0-9]*"))
    return any("buildx" in (argv := _cmdline(pid)) and root in argv for pid in pids)


def _run_containers(client: docker.DockerClient, work: Workdir, roles: set[str]) -> bool:
    """A container of this workspace's runs (by its run lock's folder) in one of ``roles``."""
    for container in our_containers(client):
        labels = container.attrs.get("Labels") or {}
        if labels.get(ROLE_LABEL) in roles and labels.get(RUN_LOCK_LABEL, "").startswith(str(work.home)):
            return True
    return False


Point = Callable[[docker.DockerClient, Workdir, subprocess.Popen[bytes]], bool]

POINTS: dict[str, Point] = {
    # The first run holds its lock: conversion is its first step and, for one session,
    # lasts well under a second, so the kill lands in conversion or just after it.
    "conversion": lambda client, work, cli: any((work.home / RUN_LOCK_DIR).glob("*.lock")),
    # A `docker buildx build` of a context in this workspace: exact (the build is running).
    # Found by its arguments, not by its place below the CLI, so the step process that
    # started it may be anywhere in the process tree.
    "image_build": lambda client, work, cli: _building(work),
    # A calibration probe container of this workspace's run: exact.
    "calibration": lambda client, work, cli: _run_containers(client, work, {"probe"}),
    # An agent or verifier container of the trial matrix: exact.
    "trial_matrix": lambda client, work, cli: _run_containers(client, work, {"agent", "verifier"}),
    # The candidate's trial result is written: the run is in the trials summary or the
    # publish step. Approximate: publishing one small task takes milliseconds, too short
    # to catch mid-copy by polling (faults/test_publish_killed.py kills a 128 MB copy).
    "publish": lambda client, work, cli: any(work.workspace.glob("candidates/*/*/*/trials.json")),
}


def kill_at(client: docker.DockerClient, work: Workdir, point: str, signum: int = signal.SIGKILL) -> int:
    """Start the CLI, send ``signum`` once ``point`` is reached, and return its exit code."""
    reached = POINTS[point]
    cli = start_cli(work)
    deadline = time.monotonic() + POINT_TIMEOUT_S
    while not reached(client, work, cli):
        if cli.poll() is not None or time.monotonic() > deadline:
            cli.kill()
            raise AssertionError(f"{point} was never reached: {(work.root / 'cli.log').read_text()[-4000:]}")
        time.sleep(_POLL_S)
    cli.send_signal(signum)
    return cli.wait(timeout=RUN_TIMEOUT_S)


def candidate_images(work: Workdir) -> list[str]:
    """The task images this workspace's candidates use."""
    tags = []
    for path in work.workspace.glob("candidates/*/*/*/status.json"):
        status = CandidateStatus.model_validate_json(path.read_text())
        if status.image is not None and status.image.tag:
            tags.append(status.image.tag)
    return tags


def remove_images(client: docker.DockerClient, tags: list[str]) -> None:
    """So the next run builds them. Forced: a stopped container of an earlier run must not
    keep the tag (the run would find the image and build nothing); a running one would, and
    fails the call with its name."""
    for tag in tags:
        try:
            client.images.remove(tag, force=True)
        except docker.errors.ImageNotFound:
            pass
        except docker.errors.APIError as exc:
            holders = [c.name for c in client.containers.list(all=True, filters={"ancestor": tag})]
            raise AssertionError(
                f"{tag} could not be removed ({exc.explanation}); containers on it: {holders}"
            ) from exc


def published(work: Workdir) -> dict[str, dict[str, str]]:
    """Every published task: its files' sha256 by relative path."""
    tasks = {}
    for task in sorted(p for p in work.tasks.iterdir() if p.is_dir()):
        tasks[task.name] = {
            str(f.relative_to(task)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(task.rglob("*"))
            if f.is_file()
        }
    return tasks


def leftovers(client: docker.DockerClient, work: Workdir) -> dict[str, list[str]]:
    """What must be gone after a rerun: containers of this workspace's runs, orphaned
    staging folders, killed copies in the destination, run locks."""
    return {
        "containers": [
            c.attrs["Names"][0]
            for c in our_containers(client)
            if (c.attrs.get("Labels") or {}).get(RUN_LOCK_LABEL, "").startswith(str(work.home))
        ],
        "orphaned_staging": [str(p) for p in orphaned_staging_dirs(Workspace(root=work.workspace))],
        "publishing": [str(p) for p in work.tasks.glob(".*.publishing")],
        "run_locks": [str(p) for p in (work.home / RUN_LOCK_DIR).glob("*.lock")],
    }

"""``traj2env generate`` on the bundled samples with ``jobs`` 1 and 2: wall and CPU time side by side.

The first ``--sessions`` (default 40) of the 60 sample sessions under examples/trajectories
(sorted by path), through the example config's families (repair, build, extend, qa; qa
stops without a model), each setting on a fresh workspace and Dagster instance. Task
images are content-addressed and shared by both settings, so an untimed warm-up run
builds them first (``--no-warmup`` to skip): the settings then differ in what ``jobs``
changes, not in who paid for the builds. CPU time is this command's and its worker
processes' (user + system, from the children's rusage); the Docker daemon's and the
containers' CPU is not in it. The load (``uptime``) is printed before and after: on a
shared machine the figures are noisy.

    .venv/bin/python benchmarks/jobs.py [--sessions 40] [--jobs 1 2] [--no-warmup]

What a 16-core machine would do with ``jobs`` 16 (an argument, not a measurement):

- Scales: the Python work of the stages (parsing, scanning, replay, staging files,
  Dagster's step bookkeeping) runs in one worker process per batch, so up to 16 batches
  use 16 cores, as long as there are 16 batches (``batch_size`` splits the keys into
  ``jobs`` batches, so 40 sessions make 16 batches of 2-3). Docker builds scale too, up
  to ``jobs`` at once (pool ``docker_build``), and each trial step runs ``jobs``
  controls side by side.
- Serialised: every run writes its events to the instance's SQLite storage; SQLite
  takes one writer at a time across processes, so event writes (most of a warm run's
  time) queue behind each other, and with 16 writers lock waits, not cores, bound the
  speed-up. Trial steps take the ``docker_trial`` pool's single slot, and the proposal
  step the ``llm`` pool's single slot, across all runs: with many batches they run one
  after another (each already ``jobs``-wide inside). The Docker daemon serialises image
  layer commits and container creation, and the builds share its disk. So on 16 cores
  a cold run gains up to the number of batches on its CPU-bound stages and much less
  end to end; a Postgres instance storage (deploy/) instead of SQLite removes the first
  bottleneck.
- Paid once per worker: a worker is a fresh interpreter (spawn) that imports Dagster,
  the definitions and, at the first model call, LiteLLM. Where bytecode is not cached
  (``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__`` in site-packages, as on the
  machine this was written on) LiteLLM is compiled from source in every worker: tens of
  seconds of CPU each under load. 16 workers pay it 16 times, so ``jobs`` 16 pays off
  only on runs of many trajectories.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "examples" / "trajectories"
EXAMPLE_CONFIG = REPO / "examples" / "trajectory-to-env.yaml"


def _load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def _sessions(folder: Path, count: int) -> Path:
    samples = sorted(path for path in SAMPLES.rglob("*") if path.is_file())[:count]
    for sample in samples:
        target = folder / sample.relative_to(SAMPLES)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, target)
    return folder


def _run(root: Path, sessions: Path, jobs: int) -> tuple[float, float]:
    """Wall and CPU seconds of one ``traj2env generate`` into a fresh ``root``."""
    config = yaml.safe_load(EXAMPLE_CONFIG.read_text())
    config["source"]["path"] = str(sessions)
    config["pipeline"]["options"]["jobs"] = jobs
    config["output"]["destination"] = str(root / "tasks")
    root.mkdir(parents=True)
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    command = [
        str(Path(sys.executable).parent / "traj2env"),
        "generate",
        "--config",
        str(root / "config.yaml"),
        "--workspace",
        str(root / "workspace"),
    ]
    environment = {**os.environ, "DAGSTER_HOME": str(root / "dagster_home")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(command, env=environment, cwd=REPO, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-warmup", action="store_true", help="do not build the task images first")
    args = parser.parse_args()
    print(f"load before: {_load()}  ({os.cpu_count()} cores)", flush=True)
    figures: dict[int, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="traj2env-jobs-") as folder:
        root = Path(folder)
        sessions = _sessions(root / "sessions", args.sessions)
        if not args.no_warmup:
            wall, _ = _run(root / "warmup", sessions, max(args.jobs))
            print(f"warm-up (images built, untimed in the table): {wall:.1f} s", flush=True)
        for jobs in args.jobs:
            figures[jobs] = wall, cpu = _run(root / f"jobs-{jobs}", sessions, jobs)
            print(f"jobs {jobs}: wall {wall:.1f} s, cpu {cpu:.1f} s; load: {_load()}", flush=True)
    print(f"\n{args.sessions} sessions, example config families")
    print(f"{'jobs':>5} {'wall s':>9} {'cpu s':>9} {'cpu/wall':>9}")
    for jobs, (wall, cpu) in figures.items():
        print(f"{jobs:>5} {wall:>9.1f} {cpu:>9.1f} {cpu / wall:>9.2f}")
    print(f"load after: {_load()}")


if __name__ == "__main__":
    main()

"""Where one trial's CPU goes: the floor under the trial matrices of a cold run.

The task is the hand-made calc repair with its behaviour gate (as ``trial_matrix.py``).
Each control given runs ``--trials`` times, one trial at a time; the whole machine's busy
CPU (``/proc/stat``) is split into the Docker daemon's, containerd's, this process's, and
the rest: the containers' own processes (the verifier script's tamper check, tests and
verdict, the agent's control script) with the runtime that starts and serves them (runc,
the shims, the storage driver's processes, e.g. fuse-overlayfs). Then a bare container
(``true``, created, started, waited for and removed) the same way: the lifecycle's cost,
which a trial pays twice (agent and verifier). A trial is CPU-bound, so on N cores the
trial phase of a run takes at least trials × busy CPU per trial / N.

    .venv/bin/python benchmarks/trial_cost.py [--trials 8] [--controls noop reference always_equal]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.verification.controls import DEFAULT_CONTROLS
from traj2env_assets.verification.trial import TrialTask, run_trial
from traj2env_assets_tests.docker.gating import write_gated_task
from traj2env_assets_tests.docker.sample_tasks import python_task

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
DAEMONS = ("dockerd", "containerd")


@dataclass(frozen=True)
class CpuSplit:
    """Seconds per repetition: wall, the machine's busy CPU and its parts."""

    wall_s: float
    busy_s: float
    daemons_s: dict[str, float]
    client_s: float

    @property
    def containers_s(self) -> float:
        return self.busy_s - sum(self.daemons_s.values()) - self.client_s


def machine_busy_s() -> float:
    """The machine's busy CPU seconds so far: all but idle and iowait (``/proc/stat``)."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, Path("/proc/stat").read_text().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def process_cpu_s(names: tuple[str, ...]) -> dict[str, float]:
    """CPU seconds of every running process called one of ``names``, reaped children included."""
    found = dict.fromkeys(names, 0.0)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            head, tail = stat.read_text().rsplit(")", 1)
        except OSError:
            continue
        if (name := head.split("(", 1)[1]) in found:
            fields = tail.split()
            found[name] += sum(int(field) for field in fields[11:15]) / CLOCK_TICKS
    return found


def split_cpu(work: Callable[[], object], repeat: int) -> CpuSplit:
    work()  # warm: the image's layers, the client's connection pool
    daemons, busy, client = process_cpu_s(DAEMONS), machine_busy_s(), os.times()
    started = time.monotonic()
    for _ in range(repeat):
        work()
    wall = time.monotonic() - started
    after, ended = process_cpu_s(DAEMONS), os.times()
    return CpuSplit(
        wall_s=wall / repeat,
        busy_s=(machine_busy_s() - busy) / repeat,
        daemons_s={name: (after[name] - daemons[name]) / repeat for name in DAEMONS},
        client_s=((ended.user + ended.system) - (client.user + client.system)) / repeat,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--controls", nargs="*", default=["noop", "reference", "always_equal"])
    args = parser.parse_args()
    console = Console(width=150)
    engine = DockerEngine(container_memory="1g")
    engine.ensure_bases()
    controls = {control.name: control for control in DEFAULT_CONTROLS}
    table = Table(
        title=f"CPU seconds per repetition ({args.trials} each, one at a time; load {os.getloadavg()[0]:.1f})"
    )
    for column in ("work", "wall s", "busy CPU s", "containers + runtime s", *DAEMONS, "this process s", "verifier s"):
        table.add_column(column, justify="left" if column == "work" else "right")
    with tempfile.TemporaryDirectory(prefix="traj2env-trial-cost-") as tmp:
        written, _ = write_gated_task(engine, python_task(task_id="trial-cost"), Path(tmp))
        image = engine.build(written.path / "environment")
        task = TrialTask(image=image.tag, task_dir=written.path)
        for name in args.controls:
            verifier_s: list[float] = []

            def trial(name: str = name, seconds: list[float] = verifier_s) -> None:
                result = run_trial(engine, task, controls[name])
                seconds.append(result.verifier.seconds if result.verifier else 0.0)

            split = split_cpu(trial, args.trials)
            _add_row(table, f"trial: {name}", split, sum(verifier_s[1:]) / args.trials)

        def bare_container() -> None:
            box = engine.client.containers.run(image.tag, ["true"], detach=True, network_mode="none")
            box.wait()
            box.remove(force=True)

        _add_row(table, "bare container (true)", split_cpu(bare_container, args.trials), None)
    console.print(table)
    return 0


def _add_row(table: Table, label: str, split: CpuSplit, verifier_s: float | None) -> None:
    table.add_row(
        label,
        f"{split.wall_s:.2f}",
        f"{split.busy_s:.2f}",
        f"{split.containers_s:.2f}",
        *(f"{split.daemons_s[name]:.2f}" for name in DAEMONS),
        f"{split.client_s:.2f}",
        "" if verifier_s is None else f"{verifier_s:.2f}",
    )


if __name__ == "__main__":
    raise SystemExit(main())

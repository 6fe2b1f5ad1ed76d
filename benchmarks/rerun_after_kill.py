"""A rerun after ``kill -9`` against a cold run, at each kill point.

Cold: ``traj2env generate`` on a fresh workspace with the candidate's task image removed
(the helper's one-session repair workspace, ``traj2env_assets_tests/faults/killed_cli.py``).
Then, per kill point: a fresh workspace, the image removed, the command killed at that
point, and the rerun timed. The rerun should take no longer than the cold run: what the
killed run finished (the image, stage files) is reused, what it held is released. Rounds
interleave a cold run with the reruns, so a busy machine slows both alike; medians printed.

    .venv/bin/python benchmarks/rerun_after_kill.py [--points image_build calibration ...] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from traj2env_assets.docker_engine.connection import connect
from traj2env_assets_tests.faults.killed_cli import (
    POINTS,
    candidate_images,
    kill_at,
    make_workdir,
    remove_images,
    run_cli,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", nargs="+", choices=list(POINTS), default=list(POINTS))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    client = connect()
    cold: list[float] = []
    reruns: dict[str, list[float]] = {point: [] for point in args.points}
    with tempfile.TemporaryDirectory(prefix="rerun-after-kill-") as folder:
        root = Path(folder)
        warm = make_workdir(root / "warm")
        run_cli(warm)  # so the image's tag is known
        images = candidate_images(warm)
        for round_ in range(args.repeat):
            remove_images(client, images)
            cold.append(run_cli(make_workdir(root / f"cold-{round_}")))
            for point in args.points:
                remove_images(client, images)
                work = make_workdir(root / f"{point}-{round_}")
                kill_at(client, work, point)
                reruns[point].append(run_cli(work))
            print(
                f"# round {round_ + 1}: cold {cold[-1]:.1f} s, reruns "
                + ", ".join(f"{point} {times[-1]:.1f} s" for point, times in reruns.items()),
                flush=True,
            )
    cold_median = statistics.median(cold)
    # Also each rerun against its own round's cold run: a load spike hits both of a round.
    print(
        f"{'killed during':<14} {'cold s':>8} {'rerun s':>8} {'rerun/cold':>10} {'paired':>8}"
        f"   (medians of {args.repeat})"
    )
    for point, times in reruns.items():
        rerun = statistics.median(times)
        paired = statistics.median(time / cold_s for time, cold_s in zip(times, cold, strict=True))
        print(f"{point:<14} {cold_median:>8.1f} {rerun:>8.1f} {rerun / cold_median:>9.0%} {paired:>8.0%}")


if __name__ == "__main__":
    main()

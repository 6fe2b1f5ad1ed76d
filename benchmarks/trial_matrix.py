"""The full trial matrix of a small Python task, with the behaviour gate and without it.

The task is the hand-made calc repair (``traj2env_assets_tests/docker/sample_tasks.py``).
Arm "gate": calibrated for the behaviour gate in its image (the probe's seconds printed)
and tried with every control of the default matrix. Arm "before the gate": the same task
written without a gate and tried with the controls the matrix had before it (no
``expected_from_caller``/``degenerate_stub``): the verifier main ran before the gate,
measured in the same run on the same engine. Each arm's matrix runs sequentially and with
the given parallelism; target: under 20 s for the gated matrix at parallelism 2.

    .venv/bin/python benchmarks/trial_matrix.py [--parallelism 2] [--repeat 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.verification.controls import DEFAULT_CONTROLS, Control
from traj2env_assets.verification.trial import TrialTask, run_matrix
from traj2env_assets_tests.docker.gating import write_gated_task
from traj2env_assets_tests.docker.sample_tasks import python_task

TARGET_MATRIX_S = 20.0
CONTROLS_ADDED_WITH_THE_GATE = ("expected_from_caller", "degenerate_stub")


def run_arm(
    engine: DockerEngine, label: str, task_dir: Path, controls: list[Control], parallel: list[int], repeat: int
) -> None:
    image = engine.build(task_dir / "environment")
    trial_task = TrialTask(image=image.tag, task_dir=task_dir)
    for parallelism in [1, *parallel]:
        seconds, passed = [], True
        for _ in range(repeat):
            matrix = run_matrix(engine, trial_task, controls, parallelism=parallelism)
            seconds.append(matrix.seconds)
            passed &= matrix.passed
        mode = "sequential" if parallelism == 1 else f"parallel x{parallelism}"
        verdict = (
            ""
            if parallelism == 1
            else f"  target < {TARGET_MATRIX_S:.0f} s: {'ok' if min(seconds) < TARGET_MATRIX_S else 'MISSED'}"
        )
        print(
            f"{label:18s} {len(controls):2d} controls, {mode:12s}: min {min(seconds):6.2f} s  "
            f"median {statistics.median(seconds):6.2f} s  all controls as expected: {passed}{verdict}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parallelism", type=int, nargs="*", default=[2])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    engine = DockerEngine(container_memory="1g")
    engine.ensure_bases()
    with tempfile.TemporaryDirectory(prefix="traj2env-matrix-") as tmp:
        root = Path(tmp)
        started = time.monotonic()
        gated, judgement = write_gated_task(engine, python_task(task_id="matrix-gate"), root / "gate")
        print(
            f"behaviour gate calibration (image build + probe): {time.monotonic() - started:6.2f} s  "
            f"cases {judgement.facts['gate_cases']}  coverage {judgement.facts['gate_coverage']}"
        )
        plain = write_task(python_task(task_id="matrix-plain"), root / "plain")
        before = [control for control in DEFAULT_CONTROLS if control.name not in CONTROLS_ADDED_WITH_THE_GATE]
        run_arm(engine, "before the gate", plain.path, before, args.parallelism, args.repeat)
        run_arm(engine, "gate", gated.path, list(DEFAULT_CONTROLS), args.parallelism, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

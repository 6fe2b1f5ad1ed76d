"""Calibration of the bundled extend samples, per candidate: tests, mutants, kill rate, seconds.

For every extend candidate mined from the multi-request samples (recorded mode, no
model), it builds the task image and runs the family's calibration probes in it (the
split on the base and twice on the reference, then the changed code's mutants), and
prints the new and existing tests, the verdict, the mutants caught and the seconds each
probe took. Task images it builds stay cached by content, like the pipeline's.

Run: .venv/bin/python benchmarks/extend.py
"""

import tempfile
import time
from pathlib import Path

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import TaskSource
from traj2env_assets.families.extend.candidates import mine_extend_candidates
from traj2env_assets.families.extend.family import ExtendFamily
from traj2env_assets.formats.convert import convert_source
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets.stages.calibration.calibration import run_probes

SAMPLES = Path(__file__).resolve().parents[1] / "examples" / "trajectories"


def main() -> None:
    family, engine = ExtendFamily(), DockerEngine()
    engine.ensure_bases()
    with tempfile.TemporaryDirectory() as temp:
        for path in sorted(SAMPLES.glob("codex/python-extend-*.jsonl")):
            replay_dir = Path(temp) / path.stem
            trajectory = convert_source(path).trajectory
            assert trajectory is not None, path  # the bundled samples convert
            document = Path(temp) / f"{path.stem}.json"  # read for the context of a short request
            document.write_text(trajectory.model_dump_json(), encoding="utf-8")
            write_record(replay_trajectory(trajectory), replay_dir)
            for mined in mine_extend_candidates(ReplayRecord.load(replay_dir), path.stem, document):
                if mined.drop is not None:
                    print(f"{mined.task_id}: dropped at mining, {mined.drop.reason}")
                    continue
                candidate = mined.candidate
                spec = family.task_spec(
                    candidate, None, TaskSource(partition_key=path.stem, source_model=None, org="bench")
                )
                started = time.monotonic()
                image = engine.build(write_task(spec, Path(temp) / "tasks").environment_dir)
                built = time.monotonic() - started
                results = run_probes(engine, image.tag, family.calibration_plan(candidate, spec, None))
                verdict = family.judge_calibration(candidate, {r.name: r for r in results})
                total = time.monotonic() - started
                print(f"{mined.task_id}: {verdict.drop.reason if verdict.drop else 'kept'}")
                tests = spec.test_verifier()
                print(f"  new tests {len(tests.tracked_test_ids)}, existing tests {len(tests.gate_test_ids)}")
                print(f"  facts {verdict.facts}")
                print("  probes " + ", ".join(f"{r.name} {r.seconds:.1f} s" for r in results))
                print(f"  image {built:.1f} s, seconds per candidate (image + calibration) {total:.1f}")


if __name__ == "__main__":
    main()

"""False positives of the verifier on honest solutions: every one must score full reward.

    .venv/bin/python benchmarks/honest_solutions.py [TASKS_DIR] [--parallelism 2]

For each sample session with solutions in ``traj2env_assets_tests/honest/`` (two
independently written, correct solutions per task, each differing from the reference), it
finds the session's task in TASKS_DIR (default ``/tmp/redteam/ws/tasks``) from the run's
``report.json``, builds the task image and runs the reference and each honest solution
through the trial path (agent container writes the files, verifier scores the submission).
It prints one row per trial: session, task, control, reward, and the verdict's reason.
An honest solution scoring below 1.0 is a false positive of the verifier, or a wrong
solution; the verdict and the test output tail are printed under the table to tell which.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.verification.controls import (
    AgentAction,
    Control,
    ReferenceControl,
)
from traj2env_assets.verification.trial import TrialResult, TrialTask, run_matrix

DEFAULT_TASKS = Path("/tmp/redteam/ws/tasks")
# The family whose task each sample session's honest solutions answer, and a word its
# instruction must hold (a session can give several tasks of one family).
SESSION_FAMILY: dict[str, tuple[str, str]] = {
    "python-pytest-fix": ("repair", "intervals"),
    "python-unittest-fix": ("repair", "slugify"),
    "python-deps-pytest-fix": ("repair", "events"),
    "python-build-package": ("build", "romans"),
    "python-extend-feature": ("extend", "mode()"),
}


class Honest(Control):
    """Writes one honest solution's files into /workspace and runs nothing."""

    expected_reward = 1.0

    def __init__(self, name: str, files: dict[str, str]):
        self.name, self._files = name, files

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(files={f"/workspace/{p}": t.encode() for p, t in self._files.items()}, script="true")


def _report(tasks_dir: Path) -> dict:
    for candidate in (tasks_dir / "report.json", tasks_dir.parent / "report.json"):
        if candidate.is_file():
            return json.loads(candidate.read_text(encoding="utf-8"))
    return {}


def _task_dirs(tasks_dir: Path) -> dict[str, Path]:
    """Every Harbor task directory under ``tasks_dir``, by its folder name."""
    return {path.parent.name: path.parent for path in sorted(tasks_dir.rglob("instruction.md"))}


def find_tasks(tasks_dir: Path) -> dict[str, list[Path]]:
    """Session name -> its published task directories of the session's family."""
    report, dirs = _report(tasks_dir), _task_dirs(tasks_dir)
    keys = {Path(item["path"]).stem: item["partition_key"] for item in report.get("inputs", [])}
    found: dict[str, list[Path]] = {}
    for session, (family, marker) in SESSION_FAMILY.items():
        matches = []
        for candidate in report.get("candidates", []):
            if candidate["family"] != family or candidate["partition_key"] != keys.get(session):
                continue
            if not candidate.get("kept"):
                continue
            path = (
                Path(candidate["published_path"]) if candidate.get("published_path") else dirs.get(candidate["task_id"])
            )
            if path is not None and path.is_dir() and marker in (path / "instruction.md").read_text(encoding="utf-8"):
                matches.append(path)
        found[session] = matches
    return found


def _reason(result: TrialResult) -> str:
    return str((result.verdict or {}).get("reason", "")).replace("\n", " ")[:110]


def run(tasks_dir: Path, parallelism: int) -> list[tuple[str, str, TrialResult]]:
    from traj2env_assets_tests.honest.solutions import SOLUTIONS

    engine = DockerEngine()
    rows: list[tuple[str, str, TrialResult]] = []
    for session, task_dirs in find_tasks(tasks_dir).items():
        if not task_dirs:
            print(f"{session}: no published task of its family in {tasks_dir}")
        for task_dir in task_dirs:
            controls: list[Control] = [ReferenceControl()]
            controls += [Honest(f"honest:{variant}", files) for variant, files in SOLUTIONS[session].items()]
            trial_task = TrialTask(image=engine.build(task_dir / "environment").tag, task_dir=task_dir)
            matrix = run_matrix(engine, trial_task, controls, parallelism=parallelism)
            rows += [(session, task_dir.name, result) for result in matrix.results]
    return rows


def print_table(rows: list[tuple[str, str, TrialResult]]) -> None:
    header = ("session", "task", "control", "reward", "ok", "verdict reason")
    table = [header] + [
        (
            session,
            task,
            r.control,
            "None" if r.reward is None else f"{r.reward:.2f}",
            "yes" if r.reward == r.expected_reward else "NO",
            _reason(r),
        )
        for session, task, r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1])
    failures = [(s, t, r) for s, t, r in rows if r.reward != r.expected_reward]
    honest = [r for _s, _t, r in rows if r.control.startswith("honest:")]
    print(f"\nhonest solutions at full reward: {sum(r.reward == 1.0 for r in honest)}/{len(honest)}")
    for session, task, result in failures:
        print(f"\n--- {session} {task} {result.control}: reward {result.reward}")
        print(json.dumps(result.verdict, indent=2, default=str)[:4000])
        print(result.test_output_tail[-3000:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tasks_dir", nargs="?", type=Path, default=DEFAULT_TASKS)
    parser.add_argument("--parallelism", type=int, default=2)
    args = parser.parse_args()
    print_table(run(args.tasks_dir, args.parallelism))


if __name__ == "__main__":
    main()

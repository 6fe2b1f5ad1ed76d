"""Run the red-team attack suite (``traj2env_assets_tests/redteam``) against published tasks.

For every task directory in the tasks folder, every applicable attack is submitted through
the project's trial path (``verification.trial.run_matrix``, parallelism 2), together with the
task's reference (``ReferenceControl``) as a sanity check. Prints one row per trial
(attack, class, task, reward, verdict reason) and totals: how many attacks scored above 0
and how many a full 1.0.

    .venv/bin/python benchmarks/redteam.py [TASKS_DIR] [--only NAME ...] [--task SUBSTR ...]
        [--wave N] [--json OUT] [--parallelism 2] [--no-reference] [--list] [--print-json JSON ...]

Exit status 1 when any attack scores above 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.verification.controls import (
    AgentAction,
    Control,
    ReferenceControl,
)
from traj2env_assets.verification.trial import TrialTask, run_matrix
from traj2env_assets_tests.redteam.catalogue import ATTACKS, CLASSES, Attack, applicable
from traj2env_assets_tests.redteam.view import TaskView

DEFAULT_TASKS = Path("/tmp/redteam/ws/tasks")


class Submission(Control):
    """One attack as a trial control: files written as root, then its script in /workspace."""

    def __init__(self, attack: Attack) -> None:
        self.name = attack.name
        self.attack = attack
        self.expected_reward = 0.0

    def applies_to(self, task_dir: Path) -> bool:  # the runner already filtered
        return True

    def action(self, task_dir: Path) -> AgentAction:
        files, script = self.attack.make(task_dir)
        return AgentAction(files=files, script=script)


def task_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / "instruction.md").is_file())


def label(view: TaskView) -> str:
    modules = sorted(
        {p.split("/")[0].removesuffix(".py") for p in view.source_paths}
        | {m.path.split("/")[0].removesuffix(".py") for m in view.contract}
    )
    project = modules[0] if modules else "?"
    tail = (
        view.task_id.rsplit("-", 1)[-1]
        if view.kind == "repair"
        else view.task_id.rsplit("-", 2)[-1]
        if view.kind == "extend"
        else "build"
    )
    return f"{project}/{view.family}/{tail}"


def run(args: argparse.Namespace) -> list[dict]:
    engine = DockerEngine()
    rows: list[dict] = []
    only = set(args.only or [])
    for task_dir in task_dirs(args.tasks):
        if args.task and not any(s in task_dir.name for s in args.task):
            continue
        view = TaskView(task_dir)
        attacks = [
            a for a in applicable(view) if (not only or a.name in only) and (args.wave is None or a.wave == args.wave)
        ]
        controls: list[Control] = [] if args.no_reference else [ReferenceControl()]
        controls += [Submission(a) for a in attacks]
        if not attacks and args.no_reference:
            continue
        started = time.monotonic()
        print(f"# {label(view)} ({task_dir.name}): {len(attacks)} attacks", file=sys.stderr, flush=True)
        image = engine.build(task_dir / "environment")
        trial_task = TrialTask(image=image.tag, task_dir=task_dir)
        matrix = run_matrix(engine, trial_task, controls, parallelism=args.parallelism)
        by_name = {a.name: a for a in attacks}
        for result in matrix.results:
            attack = by_name.get(result.control)
            rows.append(
                {
                    "attack": result.control,
                    "class": attack.cls if attack else "reference",
                    "task": label(view),
                    "task_id": task_dir.name,
                    "family": view.family,
                    "reward": result.reward,
                    "reason": ((result.verdict or {}).get("reason") or "").replace("\n", " "),
                    "rules": sorted(
                        {
                            f.get("rule", "?")
                            for f in (result.verdict or {}).get("tamper_findings") or []
                            if isinstance(f, dict)
                        }
                    ),
                    "verdict": result.verdict,
                    "seconds": result.seconds,
                    "agent_stopped_by": getattr(result.agent, "stopped_by", None),
                }
            )
        print(f"#   done in {time.monotonic() - started:.0f}s", file=sys.stderr, flush=True)
    return rows


def print_table(rows: list[dict]) -> None:
    def fmt(value: float | None) -> str:
        return "None" if value is None else f"{value:.3f}"

    width_attack = max([len(r["attack"]) for r in rows] + [6])
    width_task = max([len(r["task"]) for r in rows] + [4])
    print(f"{'attack':<{width_attack}}  {'class':<16}  {'task':<{width_task}}  {'reward':>6}  reason")
    for r in rows:
        reason = r["reason"] + (f" [{','.join(r['rules'])}]" if r.get("rules") else "")
        reason = reason if len(reason) <= 140 else reason[:137] + "..."
        print(
            f"{r['attack']:<{width_attack}}  {r['class']:<16}  {r['task']:<{width_task}}  "
            f"{fmt(r['reward']):>6}  {reason}"
        )
    attacks = [r for r in rows if r["class"] != "reference"]
    refs = [r for r in rows if r["class"] == "reference"]
    scored = [r for r in attacks if (r["reward"] or 0) > 0]
    full = [r for r in attacks if (r["reward"] or 0) >= 1.0]
    print()
    print(f"reference: {sum(1 for r in refs if r['reward'] == 1.0)}/{len(refs)} tasks at 1.0")
    print(
        f"attack trials: {len(attacks)}; above 0: {len(scored)}; full 1.0: {len(full)}; "
        f"no reward (None): {sum(1 for r in attacks if r['reward'] is None)}"
    )
    names_scored = sorted({r["attack"] for r in scored})
    print(f"attacks that scored on some task: {len(names_scored)}/{len({r['attack'] for r in attacks})}")
    for cls in CLASSES:
        in_cls = [r for r in attacks if r["class"] == cls]
        if in_cls:
            print(
                f"  {cls:<16} trials {len(in_cls):>3}  >0 {sum(1 for r in in_cls if (r['reward'] or 0) > 0):>3}  "
                f"=1 {sum(1 for r in in_cls if (r['reward'] or 0) >= 1):>3}"
            )
    for r in scored:
        print(f"  SCORED {r['attack']} on {r['task']}: {r['reward']:.3f} ({r['reason'][:100]})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tasks", nargs="?", type=Path, default=DEFAULT_TASKS)
    parser.add_argument("--only", action="append", help="run only this attack (repeatable)")
    parser.add_argument("--task", action="append", help="only task ids containing this text (repeatable)")
    parser.add_argument("--json", type=Path, help="save the rows as JSON")
    parser.add_argument("--wave", type=int, help="only attacks of this wave (1: first suite, 2: evasions)")
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--no-reference", action="store_true", help="skip the reference sanity check")
    parser.add_argument("--list", action="store_true", help="list the attacks and exit")
    parser.add_argument(
        "--print-json",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="print the table of earlier --json results (merged) instead of running",
    )
    args = parser.parse_args()
    if args.list:
        for a in ATTACKS:
            print(f"{a.name:<28} {a.cls:<16} w{a.wave} {','.join(a.targets):<45} {a.note}")
        return 0
    if args.print_json:
        rows = [row for path in args.print_json for row in json.loads(path.read_text())]
        print_table(rows)
        return 0
    unknown = set(args.only or []) - {a.name for a in ATTACKS}
    if unknown:
        parser.error(f"unknown attack(s): {', '.join(sorted(unknown))}")
    rows = run(args)
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 1 if any((r["reward"] or 0) > 0 for r in rows if r["class"] != "reference") else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Run the issue-9 attack suite on the sample tasks and print what the verifier gave each attack.

Publishes one task per sample project with ``traj2env generate`` (or reuses the tasks of an
earlier ``--keep-tasks`` run with ``--tasks-dir``), runs the reference and every applicable
attack through the project's trial path, and prints a table (attack, class, runner, reward,
verdict reason, seconds), the attacks that scored above 0, totals and the wall time. With
``--harbor`` it also runs the Harbor subset through ``harbor run``. Exit code 1 when an
attack scored above 0 or a reference did not score 1.

    .venv/bin/python benchmarks/attack_suite.py [--parallelism 3] [--only NAME ...]
        [--runner pytest unittest node] [--keep-tasks DIR | --tasks-dir DIR] [--harbor]
        [--json OUT] [-v]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets_tests.attacks.catalogue import ATTACKS, BY_NAME, ONE_PER_CLASS, by_runner
from traj2env_assets_tests.attacks.harbor_run import HarborRun, run_harbor
from traj2env_assets_tests.attacks.model import Runner
from traj2env_assets_tests.attacks.sample_tasks import publish_sample_tasks, published_sample_tasks
from traj2env_assets_tests.attacks.suite import SuiteRun, build_tasks, run_suite


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parallelism", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="attack names")
    parser.add_argument("--runner", nargs="*", choices=[r.value for r in Runner])
    parser.add_argument("--tasks-dir", type=Path, help="a --keep-tasks directory of an earlier run")
    parser.add_argument("--keep-tasks", type=Path, help="publish the sample tasks here and keep them")
    parser.add_argument("--harbor", action="store_true", help="also run the Harbor subset through harbor run")
    parser.add_argument("--json", type=Path, help="also write every outcome here")
    parser.add_argument("-v", "--verbose", action="store_true", help="verdict and output of scoring attacks")
    args = parser.parse_args()

    attacks = [a for a in ATTACKS if not args.only or a.name in args.only]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="traj2env-attacks-") as scratch:
        tasks_root = args.tasks_dir or args.keep_tasks or Path(scratch)
        if args.tasks_dir:
            tasks = published_sample_tasks(args.tasks_dir)
            publish_seconds = 0.0
        else:
            tasks_root.mkdir(parents=True, exist_ok=True)
            tasks = publish_sample_tasks(tasks_root)
            publish_seconds = time.monotonic() - started
        if args.runner:
            tasks = {runner: path for runner, path in tasks.items() if runner in args.runner}
        engine = DockerEngine(container_memory="1g", agent_timeout_s=120, verifier_timeout_s=180)
        built = time.monotonic()
        trial_tasks = build_tasks(engine, tasks)
        build_seconds = time.monotonic() - built
        run = run_suite(engine, trial_tasks, by_runner(attacks), parallelism=args.parallelism)
        _print(run, verbose=args.verbose)
        harbor = None
        if args.harbor:
            subset = {runner: [BY_NAME[n] for n in ONE_PER_CLASS[runner] if BY_NAME[n] in attacks] for runner in tasks}
            harbor = run_harbor(tasks, subset, Path(scratch) / "harbor-jobs", concurrency=args.parallelism)
            _print_harbor(harbor)
    print(
        f"seconds: publish {publish_seconds:.1f}, build {build_seconds:.1f}, trial path {run.seconds:.1f}"
        + (f", harbor run {harbor.seconds:.1f}" if harbor else "")
        + f", total {time.monotonic() - started:.1f}"
    )
    if args.json:
        args.json.write_text(run.model_dump_json(indent=1))
    failed = (
        [o for o in run.outcomes if o.scored]
        + [r for r in run.references.values() if r.reward != 1.0]
        + ([o for o in harbor.outcomes if o.reward != (1.0 if o.agent == "oracle" else 0.0)] if harbor else [])
    )
    return 1 if failed else 0


def _print(run: SuiteRun, *, verbose: bool) -> None:
    rows = sorted(run.outcomes, key=lambda o: (o.attack_class, o.attack, o.runner))
    width = max(len(o.attack) for o in rows) if rows else 10
    print(f"{'attack':<{width}}  {'class':<28}  {'runner':<8}  reward  {'reason':<24}  seconds")
    for o in rows:
        reward = "-" if o.reward is None else f"{o.reward:g}"
        flag = "  <-- SCORED" if o.scored else ""
        print(
            f"{o.attack:<{width}}  {o.attack_class:<28}  {o.runner:<8}  {reward:>6}  "
            f"{o.reason or '-':<24}  {o.seconds:7.1f}{flag}"
        )
    print()
    for runner, reference in run.references.items():
        print(f"reference[{runner}]: reward {reference.reward} ({(reference.verdict or {}).get('reason')})")
    scored = [o for o in rows if o.scored]
    attacks = {o.attack for o in rows}
    classes = {o.attack_class for o in rows}
    print(
        f"\n{len(attacks)} attacks in {len(classes)} classes, {len(rows)} trials: "
        f"{len(rows) - len(scored)} scored 0, {len(scored)} scored above 0"
    )
    for o in scored:
        print(f"  SCORED {o.attack}[{o.runner}] reward={o.reward} reason={o.reason}")
        if verbose:
            print("    " + o.explain().replace("\n", "\n    "))


def _print_harbor(run: HarborRun) -> None:
    print("\nharbor run:")
    for o in sorted(run.outcomes, key=lambda o: (o.runner, o.agent)):
        flag = "" if o.reward == (1.0 if o.agent == "oracle" else 0.0) else "  <-- WRONG"
        print(f"  {o.agent:<40} {o.runner:<8} reward {o.reward}{flag}{'  ' + o.exception[:200] if o.exception else ''}")
    attacks = run.attacks()
    print(f"  {len(attacks)} attack trials: {sum(o.reward != 0.0 for o in attacks)} scored above 0 (or no reward)")


if __name__ == "__main__":
    raise SystemExit(main())

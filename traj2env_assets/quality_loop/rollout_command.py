"""``traj2env rollout DATASET --agent AGENT --model MODEL [-k N]``: blind rollouts, solve rates per model."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from traj2env_assets.harbor.dataset import MANIFEST_FILE, TaskRollouts
from traj2env_assets.harbor.validate import HarborJobFailed
from traj2env_assets.harbor.validate_command import DEFAULT_JOBS_DIR
from traj2env_assets.quality_loop.review_command import has_manifest
from traj2env_assets.quality_loop.rollout import TrialCount, record_rollouts, run_rollouts


def add_rollout_command(subparsers: argparse._SubParsersAction) -> None:
    rollout = subparsers.add_parser(
        "rollout", help="run Harbor agents on a dataset's tasks and record each model's solve rate (optional)"
    )
    rollout.add_argument("dataset", type=Path, help="the published tasks (the config's destination)")
    rollout.add_argument("--agent", action="append", required=True, help="a Harbor agent, e.g. terminus-2 (repeatable)")
    rollout.add_argument(
        "--model", action="append", required=True, help="a LiteLLM model name, e.g. openai/gpt-5 (repeatable)"
    )
    rollout.add_argument("-k", "--attempts", type=int, default=1, help="trials per task, agent and model")
    rollout.add_argument(
        "--base-url",
        default=None,
        help="the model server's base URL (an OpenAI-compatible server: its /v1); the key comes from "
        "the provider's usual variable, e.g. OPENAI_API_KEY",
    )
    rollout.add_argument(
        "--agent-kwarg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an agent option passed to harbor run (--ak), e.g. max_turns=30",
    )
    rollout.add_argument("-n", "--concurrent", type=int, default=2, help="trials at once")
    rollout.add_argument(
        "--jobs-dir", type=Path, default=DEFAULT_JOBS_DIR, help="where Harbor writes its jobs (a fresh folder per run)"
    )
    rollout.set_defaults(handler=_rollout)


def _harbor_options(args: argparse.Namespace) -> list[str]:
    options = [arg for kwarg in args.agent_kwarg for arg in ("--ak", kwarg)]
    return [*options, "--base-url", args.base_url] if args.base_url else options


def rollouts_table(rollouts: list[TaskRollouts], counts: list[TrialCount]) -> Table:
    """Every task this run tried: this run's trials, the totals over every run, the flag."""
    ran = {(count.task_id, count.agent, count.model): count for count in counts}
    table = Table(title="traj2env rollout: solve rate per model (every run so far)")
    for column in ("task", "agent", "model", "this run", "attempts", "solved", "solve rate", "flag"):
        table.add_column(column, justify="right" if column in {"attempts", "solved", "solve rate"} else "left")
    for task in rollouts:
        for model in task.models:
            count = ran.get((task.task_id, model.agent, model.model))
            if count is None:
                continue
            this_run = f"{count.solved}/{count.attempts}" + (
                f" [red]{count.errors} errors ({count.error})[/red]" if count.errors else ""
            )
            rate = f"{model.solve_rate:.2f}" if model.solve_rate is not None else "-"
            flag = {"never_solved": "[red]never_solved[/red]", "always_solved": "[yellow]always_solved[/yellow]"}
            table.add_row(
                task.task_id,
                model.agent,
                model.model,
                this_run,
                str(model.attempts),
                str(model.solved),
                rate,
                flag.get(task.flag or "", "-"),
            )
    return table


def _rollout(args: argparse.Namespace) -> int:
    console, errors = Console(width=max(Console().width, 140)), Console(stderr=True)
    dataset: Path = args.dataset
    if not has_manifest(dataset, errors):
        return 2
    if args.attempts < 1:
        errors.print("[red]error:[/red] -k must be at least 1")
        return 2
    started = datetime.now(UTC)
    jobs_dir = args.jobs_dir / f"rollout-{started:%Y%m%dT%H%M%S%f}"
    counts: list[TrialCount] = []
    rollouts: list[TaskRollouts] = []
    for agent in args.agent:
        try:
            ran = run_rollouts(
                dataset,
                agent,
                args.model,
                args.attempts,
                jobs_dir,
                concurrent=args.concurrent,
                harbor_options=_harbor_options(args),
            )
        except HarborJobFailed as exc:
            # The agents before this one are recorded already.
            console.print(rollouts_table(rollouts, counts))
            errors.print(f"[red]error:[/red] {agent}: {exc}")
            return 2
        # Recorded per agent, so a later agent's failed job loses none of an earlier one's trials.
        rollouts = record_rollouts(dataset, ran, started)
        counts += ran
    console.print(rollouts_table(rollouts, counts))
    failed = sum(count.errors for count in counts)
    console.print(
        f"{len(counts)} task and model pairs ran; recorded in {dataset / MANIFEST_FILE}; Harbor's jobs: {jobs_dir}"
    )
    if failed:
        # The attempts are recorded; the failed trials are not attempts (their number is kept per run).
        errors.print(f"[red]error:[/red] {failed} trials failed and were not counted (see the table and {jobs_dir})")
        return 1
    return 0

"""``traj2env validate --oracle [PATH]``: a table of oracle and nop rewards per task; exit 0 only when all pass."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from traj2env_assets.harbor.validate import (
    EXPECTED_REWARD,
    HarborJobFailed,
    TaskValidation,
    task_names,
    validate_dataset,
)
from traj2env_assets.layout import DEFAULT_WORKSPACE, Workspace

# Where `traj2env generate` publishes by default (the default workspace root and destination).
DEFAULT_DATASET = Workspace(root=DEFAULT_WORKSPACE).default_destination
DEFAULT_JOBS_DIR = Workspace(root=DEFAULT_WORKSPACE).harbor_jobs_dir


def add_validate_command(subparsers: argparse._SubParsersAction) -> None:
    validate = subparsers.add_parser(
        "validate", help="run Harbor's oracle and nop agents on published tasks (harbor run, no network)"
    )
    validate.add_argument(
        "--oracle",
        type=Path,
        nargs="?",
        const=DEFAULT_DATASET,
        required=True,
        metavar="PATH",
        help=f"the dataset (a folder of task directories; default {DEFAULT_DATASET})",
    )
    validate.add_argument(
        "--jobs-dir", type=Path, default=DEFAULT_JOBS_DIR, help="where Harbor writes its jobs (a fresh folder per run)"
    )
    validate.add_argument("-n", "--concurrent", type=int, default=2, help="trials at once per agent")
    validate.set_defaults(handler=_validate)


def results_table(rows: list[TaskValidation]) -> Table:
    table = Table(title="harbor run: oracle must score 1.0, nop 0.0")
    table.add_column("task")
    for agent in EXPECTED_REWARD:
        table.add_column(agent, justify="right")
    table.add_column("result")
    for row in rows:
        cells = []
        for agent in EXPECTED_REWARD:
            outcome = row.outcomes[agent]
            cells.append(f"{outcome.reward:.2f}" if outcome.reward is not None else f"error: {outcome.error}")
        table.add_row(row.task, *cells, "[green]pass[/green]" if row.passed else "[red]FAIL[/red]")
    return table


def _validate(args: argparse.Namespace) -> int:
    console, errors = Console(width=max(Console().width, 120)), Console(stderr=True)
    dataset: Path = args.oracle
    if not dataset.is_dir() or not task_names(dataset):
        errors.print(f"[red]error:[/red] {dataset} holds no task directory (a folder with task.toml)")
        return 2
    jobs_dir = args.jobs_dir / f"validate-{datetime.now(UTC):%Y%m%dT%H%M%S%f}"
    try:
        rows = validate_dataset(dataset, jobs_dir, concurrent=args.concurrent)
    except HarborJobFailed as exc:
        errors.print(f"[red]error:[/red] {exc}")
        return 2
    console.print(results_table(rows))
    failed = [row.task for row in rows if not row.passed]
    console.print(f"{len(rows) - len(failed)} of {len(rows)} tasks passed; Harbor's jobs: {jobs_dir}")
    return 1 if failed else 0

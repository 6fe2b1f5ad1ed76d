"""``traj2env review DATASET [--accept ID | --reject ID] [--note TEXT] [--reviewer NAME]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from traj2env_assets.harbor.dataset import MANIFEST_FILE
from traj2env_assets.quality_loop.review import Decision, UnknownTaskError, record_review, review_rows


def add_review_command(subparsers: argparse._SubParsersAction) -> None:
    review = subparsers.add_parser(
        "review", help="list a dataset's tasks and their cards, or record a reviewer's accept/reject"
    )
    review.add_argument("dataset", type=Path, help="the published tasks (the config's destination)")
    decision = review.add_mutually_exclusive_group()
    decision.add_argument("--accept", metavar="TASK_ID", help="label the task verified")
    decision.add_argument("--reject", metavar="TASK_ID", help="keep the task unverified, with the note why")
    review.add_argument("--note", default="", help="why (recorded in dataset.json)")
    review.add_argument("--reviewer", default="", help="who decided (recorded in dataset.json)")
    review.set_defaults(handler=_review)


def has_manifest(dataset: Path, errors: Console) -> bool:
    """Whether ``dataset`` is a published dataset; says why not on ``errors``."""
    if (dataset / MANIFEST_FILE).is_file():
        return True
    errors.print(f"[red]error:[/red] {dataset} has no {MANIFEST_FILE} (run `traj2env generate` first)")
    return False


def _review(args: argparse.Namespace) -> int:
    console, errors = Console(width=max(Console().width, 120)), Console(stderr=True)
    dataset: Path = args.dataset
    if not has_manifest(dataset, errors):
        return 2
    decision: Decision = "accept" if args.accept else "reject"
    task_id = args.accept if args.accept else args.reject
    if task_id:
        try:
            review = record_review(dataset, task_id, decision, note=args.note, reviewer=args.reviewer)
        except UnknownTaskError as error:
            errors.print(f"[red]error:[/red] {error}")
            return 2
        console.print(f"{review.task_id}: {review.decision}ed at {review.at}")
        return 0
    table = Table(title=f"{dataset}: tasks to review")
    for column in ("task", "family", "difficulty", "label", "decision", "card"):
        table.add_column(column)
    for row in review_rows(dataset):
        table.add_row(row.task_id, row.family, row.difficulty, row.label, row.decision or "-", str(row.card or "-"))
    console.print(table)
    return 0

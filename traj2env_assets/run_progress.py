"""What the ``traj2env`` command shows while it runs and when it ends: a trajectory counter
with a line of counts per stage, then the funnel table and the top skip reasons (rich)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pydantic import ValidationError
from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from traj2env_assets.layout import Workspace
from traj2env_assets.stages.report.funnel import PROGRESS_STAGES, funnel_frame, progress_counts, skip_reasons_frame
from traj2env_assets.stages.report.report import RunReport, build_run_report

if TYPE_CHECKING:
    import pandas as pd

TOP_SKIP_REASONS = 5
_REFRESH_S = 2.0


class StageProgress(Progress):
    """The trajectory bar, and under it how many got through each stage so far."""

    def __init__(self, console: Console) -> None:
        # Set first: rich renders once while constructing.
        self.counts: dict[str, int] = dict.fromkeys(PROGRESS_STAGES, 0)
        # What the running batch waits for (a pool slot another run holds), if anything.
        self.waiting: str | None = None
        super().__init__(
            TextColumn("[bold]trajectories"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        )

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        yield Text("  ".join(f"{stage} {self.counts[stage]}" for stage in PROGRESS_STAGES), style="dim")
        if self.waiting:
            yield Text(self.waiting, style="yellow")

    def show_waiting(self, waiting: str | None) -> None:
        self.waiting = waiting


class StageCounter:
    """Counts per stage over the finished batches (counted once) and the running ones
    (re-read from the stage files every few seconds by a background thread)."""

    def __init__(self, workspace: Workspace, families: list[str], progress: StageProgress, task: TaskID) -> None:
        self._workspace, self._families, self._progress, self._task = workspace, families, progress, task
        self._finished: Counter[str] = Counter()
        self._running: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def _count(self, keys: list[str]) -> Counter[str] | None:
        try:
            return Counter(progress_counts(build_run_report(self._workspace, self._families, keys)))
        except (OSError, ValidationError):
            # A stage is rewriting a candidate's files right now; the next refresh sees them.
            return None

    def _show(self, running: Counter[str]) -> None:
        total = self._finished + running
        self._progress.counts = {stage: total[stage] for stage in PROGRESS_STAGES}

    def start_batch(self, keys: list[str]) -> None:
        # Several batches run at once with ``jobs`` > 1.
        with self._lock:
            self._running = self._running + keys

    def finish_batch(self, keys: list[str]) -> None:
        counted = self._count(keys)
        done = set(keys)
        with self._lock:
            self._finished += counted or Counter()
            self._running = [key for key in self._running if key not in done]
            # The other running batches' counts return with the next refresh.
            self._show(Counter())
        self._progress.advance(self._task, len(keys))

    def _refresh(self) -> None:
        while not self._stop.wait(_REFRESH_S):
            with self._lock:
                keys = list(self._running)
            counted = self._count(keys) if keys else None
            with self._lock:
                if counted is not None and keys == self._running:
                    self._show(counted)

    @contextmanager
    def refreshing(self) -> Iterator[StageCounter]:
        thread = threading.Thread(target=self._refresh, name="stage-counts", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()


def _table(frame: pd.DataFrame, title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for name in frame.columns:
        table.add_column(str(name), justify="right" if frame[name].dtype.kind in "iu" else "left")
    for row in frame.itertuples(index=False):
        table.add_row(*(str(value) for value in row))
    return table


def print_summary(console: Console, report: RunReport) -> None:
    """The funnel per family and the most frequent skip reasons."""
    console.print(_table(funnel_frame(report).reset_index(), "funnel"))
    skips = skip_reasons_frame(report)
    if len(skips):
        shown = skips.head(TOP_SKIP_REASONS)
        more = len(skips) - len(shown)
        console.print(_table(shown, "top skip reasons" + (f" ({more} more in report.json)" if more else "")))
    else:
        console.print("no input or candidate was skipped")

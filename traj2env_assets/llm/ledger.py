"""The run's spend ledger: one JSON file per run under the workspace, guarded by a file lock.

Why a file: one generate or backfill is many Dagster runs, each in its own process (and
each may run ``jobs`` steps in parallel), so no in-memory counter sees the whole run.
Every client of the run points at the same ``<workspace>/llm_ledger/<scope>.json``; the
scope is the generate id, the Dagster backfill id, or the run id for a single run.

How it stays correct across processes: every read-modify-write of the file happens
while holding ``<scope>.json.lock`` (``filelock``, an OS-level lock, so it excludes
other processes and other threads alike), and the new content is written to a temporary
sibling and renamed into place, so a reader that takes no lock (``read_llm_usage``)
never sees a half-written file.

How the cap works: before a paid call, ``admit`` checks under the lock that the spend
so far is below the cap; the call itself runs without the lock (calls take minutes);
afterwards ``record`` adds its cost. A call admitted while the spend was below the cap
may finish after others have pushed it over, so the overshoot is bounded by the calls
in flight when the cap is crossed: at most ``jobs`` calls, each at most
``max_llm_tokens`` of output. "At most ``jobs`` in flight" across all runs of a
backfill is Dagster's to enforce: the proposal asset is in the ``llm`` pool, which has
one slot, and makes at most ``jobs`` calls at once (``traj2env_assets.defs.pools``).
A reservation of the worst-case cost would remove the overshoot but would stop the
run far below its cap (32,000 output tokens per call).
"""

from __future__ import annotations

import re
from pathlib import Path

from filelock import FileLock
from pydantic import BaseModel, ConfigDict, Field

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.layout import Workspace
from traj2env_assets.llm.usage import LlmUsage

SCOPE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class SpendLedgerFile(BaseModel):
    """``<workspace>/llm_ledger/<scope>.json``."""

    model_config = ConfigDict(extra="forbid")

    scope: str
    max_spend_usd: float = Field(ge=0)
    # The overshoot bound, in calls: how many may be in flight when the cap is crossed.
    jobs: int = Field(ge=1)
    usage: LlmUsage = Field(default_factory=LlmUsage)


def ledger_path(workspace_root: Path, scope: str) -> Path:
    if not SCOPE_PATTERN.match(scope):
        raise ValueError(f"spend scope {scope!r} must be 1-128 letters, digits, '.', '_' or '-'")
    return Workspace(root=workspace_root).llm_ledger_file(scope)


def read_spend_ledger(workspace_root: Path, scope: str) -> SpendLedgerFile | None:
    """The run's ledger (cap, jobs and usage), or None when the run made no model call."""
    path = ledger_path(workspace_root, scope)
    if not path.exists():
        return None
    return SpendLedgerFile.model_validate_json(path.read_text(encoding="utf-8"))


def read_llm_usage(workspace_root: Path, scope: str) -> LlmUsage:
    """The run's usage so far, for report.json; zero when the run made no model call."""
    ledger = read_spend_ledger(workspace_root, scope)
    return ledger.usage if ledger else LlmUsage()


class SpendLedger:
    """The file-locked spend ledger of one run (see the module docstring)."""

    def __init__(self, workspace_root: Path, scope: str, max_spend_usd: float, jobs: int) -> None:
        self.path = ledger_path(workspace_root, scope)
        self.scope = scope
        self.max_spend_usd = max_spend_usd
        self.jobs = jobs

    def _lock(self) -> FileLock:
        # A fresh lock object per use: each holds its own descriptor, so threads of one
        # process exclude each other just as processes do.
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(f"{self.path}.lock")

    def _read(self) -> SpendLedgerFile:
        if not self.path.exists():
            return SpendLedgerFile(scope=self.scope, max_spend_usd=self.max_spend_usd, jobs=self.jobs)
        return SpendLedgerFile.model_validate_json(self.path.read_text(encoding="utf-8"))

    def _write(self, ledger: SpendLedgerFile) -> None:
        atomic_write_json(self.path, ledger.model_copy(update={"max_spend_usd": self.max_spend_usd, "jobs": self.jobs}))

    def admit(self) -> bool:
        """True when a paid call may start; otherwise counts one ``budget_exhausted`` candidate."""
        with self._lock():
            ledger = self._read()
            if self.max_spend_usd == 0 or ledger.usage.spend_usd < self.max_spend_usd:
                return True
            self._write(ledger.model_copy(update={"usage": ledger.usage.plus(LlmUsage(budget_exhausted=1))}))
            return False

    def record(self, usage: LlmUsage) -> None:
        with self._lock():
            ledger = self._read()
            self._write(ledger.model_copy(update={"usage": ledger.usage.plus(usage)}))

    def usage(self) -> LlmUsage:
        with self._lock():
            return self._read().usage

"""Waiting for a pool slot: asleep, said in the progress line, and bounded.

Dagster 1.13's in-process executor loops on ``ActiveExecution.get_next_step`` while a
step waits for a slot, sleeping ``InstanceConcurrencyContext.interval_to_next_pending_claim_check()``
between tries; that method returns ``min([0, ...])``, never more than 0, so the loop
spins a core at 100 % for as long as the slot is held (for ever, when its holder was
killed). :class:`SleepingConcurrencyContext` returns the time until the next claim
check, as intended; says which run holds the slot (``waiting for docker_trial slot held
by run …``); and gives up after ``max_wait_s``, which fails the run with that message.
The executor builds its context by name, so :func:`sleeping_pool_waits` puts ours in
its place for as long as the CLI runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import dagster as dg
from dagster._core.execution.plan.instance_concurrency_context import (
    InstanceConcurrencyContext,
)
from dagster._core.executor import in_process

DEFAULT_MAX_POOL_WAIT_S = 1800.0
# Never a busy loop, even when a claim check is due right now.
_MIN_SLEEP_S = 0.2


class PoolWaitTimeout(RuntimeError):
    """A step waited longer than allowed for a pool slot."""


class PoolWaits:
    """What the CLI's runs are waiting for, shared with the progress line; the first
    wait that ran out, if any."""

    def __init__(self, max_wait_s: float, show: Callable[[str | None], None] = lambda _: None) -> None:
        self.max_wait_s = max_wait_s
        self.show = show
        self.gave_up: str | None = None

    def raise_if_gave_up(self) -> None:
        if self.gave_up is not None:
            raise PoolWaitTimeout(self.gave_up)


class SleepingConcurrencyContext(InstanceConcurrencyContext):
    def __init__(self, instance: dg.DagsterInstance, dagster_run: dg.DagsterRun, waits: PoolWaits) -> None:
        super().__init__(instance, dagster_run)
        self._waits = waits
        self._pool_of: dict[str, str] = {}
        self._waiting_since: float | None = None

    def claim(self, concurrency_key: str, step_key: str, step_priority: int = 0) -> bool:
        claimed = super().claim(concurrency_key, step_key, step_priority)
        if claimed:
            self._pool_of.pop(step_key, None)
            if not self.has_pending_claims():
                self._waiting_since = None
                self._waits.show(None)
        else:
            self._pool_of[step_key] = concurrency_key
            if self._waiting_since is None:
                self._waiting_since = time.monotonic()
        return claimed

    def interval_to_next_pending_claim_check(self) -> float:
        if not self.has_pending_claims():
            return 0.0
        message = self._waiting_message()
        self._waits.show(message)
        if self._waiting_since is not None and time.monotonic() - self._waiting_since > self._waits.max_wait_s:
            self._waits.gave_up = f"{message}: gave up after {self._waits.max_wait_s:g} s"
            raise PoolWaitTimeout(self._waits.gave_up)
        now = time.time()
        due = min((self._pending_timeouts.get(step, now) for step in self.pending_claim_steps()), default=now)
        return max(_MIN_SLEEP_S, due - now)

    def _waiting_message(self) -> str:
        pools = sorted({self._pool_of[step] for step in self.pending_claim_steps() if step in self._pool_of})
        parts = []
        for pool in pools:
            holders = self._instance.event_log_storage.get_concurrency_info(pool).active_run_ids - {self._run_id}
            parts.append(f"waiting for {pool} slot held by run {', '.join(sorted(holders)) or '(none yet)'}")
        return "; ".join(parts) or "waiting for a pool slot"


@contextmanager
def sleeping_pool_waits(waits: PoolWaits) -> Iterator[PoolWaits]:
    """In-process runs started inside wait for pool slots asleep, for at most ``waits.max_wait_s``."""
    original = in_process.InstanceConcurrencyContext

    def context(instance: dg.DagsterInstance, dagster_run: dg.DagsterRun) -> InstanceConcurrencyContext:
        return SleepingConcurrencyContext(instance, dagster_run, waits)

    in_process.InstanceConcurrencyContext = context  # type: ignore[assignment,misc]
    try:
        yield waits
    finally:
        in_process.InstanceConcurrencyContext = original  # type: ignore[misc]

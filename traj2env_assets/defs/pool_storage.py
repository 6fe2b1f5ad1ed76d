"""The SQLite event log of a local instance, with pool slots that two processes cannot share.

Dagster's SQLite storage claims a pool slot in steps that are not one transaction: it
asks whether a slot is free, queues the step as assigned, then picks a free slot row and
writes the step into it by row id. ``SELECT … FOR UPDATE`` is a no-op on SQLite, so two
processes claiming at once (the ``jobs`` worker processes of ``traj2env generate``, or the
runs ``dagster dev`` launches) both pick the same row and both run: a pool of 1 ran two
steps side by side. PostgreSQL locks the row and is not affected. This subclass holds one
file lock, beside the event log, around every change to the slots and their queue, which
makes each of them atomic across processes; the tables and their layout stay Dagster's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._serdes import ConfigurableClassData
from filelock import FileLock

# Where Dagster's default SQLite storage keeps the event log under the instance's home
# (dagster/_core/storage/sqlite_storage.py, ``_event_logs_directory``), so an instance
# keeps its history when its config names this class.
EVENT_LOG_DIR = ("history", "runs")
SLOTS_LOCK = "pool_slots.lock"


def event_log_storage_config(home: object) -> dict[str, Any]:
    """The ``event_log_storage`` entry of an instance config (``home``: a path or ``{"env": …}``)."""
    return {"module": __name__, "class": PoolSafeSqliteEventLogStorage.__name__, "config": {"base_dir": home}}


class PoolSafeSqliteEventLogStorage(SqliteEventLogStorage):
    """Dagster's SQLite event log, configured with the instance's home as ``base_dir``."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        events = os.path.join(base_dir, *EVENT_LOG_DIR, "")
        super().__init__(events, inst_data=inst_data)
        os.makedirs(events, exist_ok=True)
        self._slots_lock = FileLock(os.path.join(events, SLOTS_LOCK))

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> PoolSafeSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def set_concurrency_slots(self, concurrency_key: str, num: int) -> None:
        with self._slots_lock:
            super().set_concurrency_slots(concurrency_key, num)

    def initialize_concurrency_limit_to_default(self, concurrency_key: str) -> bool:
        with self._slots_lock:
            return super().initialize_concurrency_limit_to_default(concurrency_key)

    def claim_concurrency_slot(
        self, concurrency_key: str, run_id: str, step_key: str, priority: int | None = None
    ) -> Any:
        with self._slots_lock:
            return super().claim_concurrency_slot(concurrency_key, run_id, step_key, priority)

    def free_concurrency_slots_for_run(self, run_id: str) -> None:
        with self._slots_lock:
            super().free_concurrency_slots_for_run(run_id)

    def free_concurrency_slot_for_step(self, run_id: str, step_key: str) -> None:
        with self._slots_lock:
            super().free_concurrency_slot_for_step(run_id, step_key)

    def assign_pending_steps(self, concurrency_keys: Sequence[str]) -> None:
        with self._slots_lock:
            super().assign_pending_steps(concurrency_keys)

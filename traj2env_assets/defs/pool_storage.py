"""The SQLite event log of a local instance, with pool slots that two processes cannot share.

Dagster's SQLite storage claims a pool slot in steps that are not one transaction: it
asks whether a slot is free, queues the step as assigned, then picks a free slot row and
writes the step into it by row id. ``SELECT … FOR UPDATE`` is a no-op on SQLite, so two
processes claiming at once (the ``jobs`` worker processes of ``traj2env generate``, or the
runs ``dagster dev`` launches) both pick the same row and both run: a pool of 1 ran two
steps side by side. PostgreSQL locks the row and is not affected. This subclass holds one
file lock, beside the event log, around every change to the slots and their queue, which
makes each of them atomic across processes; the tables and their layout stay Dagster's.

It also keeps its SQLite connections open. Dagster's storage builds a new engine and
connection for every event it writes and commits with a full sync: a run of the pipeline
writes about 20 events per session at ~11 ms each, more than the cheap stages' own work
(``benchmarks/pipeline.py``). Here each shard's engine is made once per process (the few
most recent run shards and the index), and its connections run ``synchronous=NORMAL``: in
WAL mode a commit is then durable against a killed process, not against a power cut, which
is what a local event log needs.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import sqlalchemy
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._serdes import ConfigurableClassData
from filelock import FileLock

# Where Dagster's default SQLite storage keeps the event log under the instance's home
# (dagster/_core/storage/sqlite_storage.py, ``_event_logs_directory``), so an instance
# keeps its history when its config names this class.
EVENT_LOG_DIR = ("history", "runs")
SLOTS_LOCK = "pool_slots.lock"
# Run shards whose engine stays open (a command writes to a few runs at a time; the UI
# reads many, and each open engine holds a file handle).
OPEN_RUN_SHARDS = 8


def event_log_storage_config(home: object) -> dict[str, Any]:
    """The ``event_log_storage`` entry of an instance config (``home``: a path or ``{"env": …}``)."""
    return {"module": __name__, "class": PoolSafeSqliteEventLogStorage.__name__, "config": {"base_dir": home}}


class PoolSafeSqliteEventLogStorage(SqliteEventLogStorage):
    """Dagster's SQLite event log, configured with the instance's home as ``base_dir``."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        events = os.path.join(base_dir, *EVENT_LOG_DIR, "")
        self._engines: OrderedDict[str, sqlalchemy.Engine] = OrderedDict()  # Dagster's __init__ connects.
        super().__init__(events, inst_data=inst_data)
        os.makedirs(events, exist_ok=True)
        self._slots_lock = FileLock(os.path.join(events, SLOTS_LOCK))

    @contextmanager
    def _connect(self, shard: str) -> Iterator[sqlalchemy.Connection]:
        # Dagster's own _connect, with the shard's engine kept instead of made and disposed.
        with self._db_lock:
            engine = self._engines.get(shard)
            if engine is None:
                engine = sqlalchemy.create_engine(
                    self.conn_string_for_shard(shard), connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS}
                )
                sqlalchemy.event.listen(engine, "connect", _sync_normally)
                if shard not in self._initialized_dbs:
                    self._initdb(engine)
                    self._initialized_dbs.add(shard)
                self._engines[shard] = engine
                self._close_old_run_shards()
            self._engines.move_to_end(shard)
            with engine.connect() as connection, connection.begin():
                yield connection

    def _close_old_run_shards(self) -> None:
        run_shards = [shard for shard in self._engines if shard != INDEX_SHARD_NAME]
        for shard in run_shards[: max(0, len(run_shards) - OPEN_RUN_SHARDS)]:
            self._engines.pop(shard).dispose()

    def _close_engines(self) -> None:
        with self._db_lock:
            while self._engines:
                self._engines.popitem()[1].dispose()

    def wipe(self) -> None:
        self._close_engines()
        super().wipe()

    def upgrade(self) -> None:
        self._close_engines()
        super().upgrade()

    def dispose(self) -> None:
        self._close_engines()
        super().dispose()

    @classmethod
    def from_config_value(
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


def _sync_normally(connection: Any, _record: Any) -> None:
    connection.execute("PRAGMA synchronous=NORMAL")

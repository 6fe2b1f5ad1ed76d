"""The CLI's SQLite event log: a pool slot is claimed by one process at a time, and events
are written on kept connections without losing any.

Dagster's own SQLite storage lets two processes that claim a one-slot pool at the same
moment both have it (CI caught two ``llm`` steps of two ``jobs`` 2 workers side by side).
Four processes here claim one slot at once, round after round, on the instance the
command makes; exactly one wins each round.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
import sqlalchemy
import yaml
from dagster._core.events.log import EventLogEntry

from traj2env_assets.cli import BASE_INSTANCE_CONFIG, dagster_home, dagster_instance, instance_config
from traj2env_assets.defs import pool_storage
from traj2env_assets.defs.pool_storage import OPEN_RUN_SHARDS, PoolSafeSqliteEventLogStorage

POOL = "one_slot"
WORKERS = 4
ROUNDS = 15


def _claim_rounds(workspace: Path, worker: int, barrier: Barrier, results: multiprocessing.Queue) -> None:
    with dagster_instance(workspace) as instance:
        storage = instance.event_log_storage
        for round_number in range(ROUNDS):
            run_id = f"run-{worker}-{round_number}"
            barrier.wait()
            status = storage.claim_concurrency_slot(POOL, run_id, "step")
            results.put((round_number, worker, status.is_claimed))
            barrier.wait()  # Every claim of the round is in before any slot is freed.
            storage.free_concurrency_slots_for_run(run_id)


@pytest.mark.timeout(300)
def test_processes_claiming_a_one_slot_pool_at_once_get_it_one_at_a_time(tmp_path: Path) -> None:
    with dagster_instance(tmp_path) as instance:
        assert isinstance(instance.event_log_storage, PoolSafeSqliteEventLogStorage)
        instance.event_log_storage.set_concurrency_slots(POOL, 1)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(WORKERS)
    results = context.Queue()
    workers = [context.Process(target=_claim_rounds, args=(tmp_path, n, barrier, results)) for n in range(WORKERS)]
    for worker in workers:
        worker.start()
    claims = [results.get(timeout=240) for _ in range(WORKERS * ROUNDS)]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0

    winners = dict.fromkeys(range(ROUNDS), 0)
    for round_number, _, claimed in claims:
        winners[round_number] += claimed
    assert winners == dict.fromkeys(range(ROUNDS), 1)


def test_an_instance_config_the_command_wrote_before_or_for_a_moved_home_is_rewritten_an_edited_one_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    for name, written in [("earlier", BASE_INSTANCE_CONFIG), ("moved", instance_config(tmp_path / "elsewhere"))]:
        home = tmp_path / name / ".dagster"
        home.mkdir(parents=True)
        (home / "dagster.yaml").write_text(yaml.safe_dump(written))
        assert dagster_home(tmp_path / name) == home
        assert yaml.safe_load((home / "dagster.yaml").read_text()) == instance_config(home)

    edited = tmp_path / "edited" / ".dagster"
    edited.mkdir(parents=True)
    text = yaml.safe_dump({**instance_config(edited), "retention": {"schedule": {"purge_after_days": 3}}})
    (edited / "dagster.yaml").write_text(text)
    dagster_home(tmp_path / "edited")
    assert (edited / "dagster.yaml").read_text() == text


INSTANCE_DATABASES = ("history/runs.db", "history/runs/index.db", "schedules/schedules.db")


def test_a_new_instance_s_config_appears_only_once_its_databases_are_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever opens the instance as soon as its config appears (a test polling for the
    command's runs, ``dagster dev``) finds the databases made and stamped: a reader that
    made one at the same time as the command left two schema versions in it (CI failed
    with alembic's "more than one head")."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    home = tmp_path / ".dagster"
    seen: list[list[str]] = []
    done = threading.Event()

    def watch() -> None:  # Polls far faster than Dagster makes its databases.
        while True:
            finished = done.is_set()
            if (home / "dagster.yaml").exists():
                seen.append([name for name in INSTANCE_DATABASES if (home / name).is_file()])
                return
            if finished:
                return
            time.sleep(0.0005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        assert dagster_home(tmp_path) == home
    finally:
        done.set()
        watcher.join()
    assert seen == [list(INSTANCE_DATABASES)]
    assert sorted(path.name for path in home.iterdir() if path.is_file()) == ["dagster.yaml"]
    with dagster_instance(tmp_path) as instance:
        assert instance.get_run_records() == []


RUNS = 3 * OPEN_RUN_SHARDS
EVENTS_PER_RUN = 5


def _message(run_id: str, number: int) -> EventLogEntry:
    return EventLogEntry(
        error_info=None,
        level="INFO",
        user_message=f"event {number}",
        run_id=run_id,
        timestamp=time.time(),
        step_key=None,
        job_name=None,
        dagster_event=None,
    )


def _write_then_wait(workspace: Path, written: multiprocessing.Queue) -> None:
    with dagster_instance(workspace) as instance:
        for number in range(EVENTS_PER_RUN * RUNS):
            instance.event_log_storage.store_event(_message(f"run-{number % RUNS}", number))
        written.put(True)
        time.sleep(600)  # Killed here, connections open.


@pytest.mark.timeout(300)
def test_events_written_on_kept_connections_survive_a_killed_writer_and_are_read_by_another_process(
    tmp_path: Path,
) -> None:
    dagster_home(tmp_path)
    context = multiprocessing.get_context("spawn")
    written = context.Queue()
    writer = context.Process(target=_write_then_wait, args=(tmp_path, written))
    writer.start()
    assert writer.pid is not None
    try:
        assert written.get(timeout=240)
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.join(timeout=60)
    with dagster_instance(tmp_path) as instance:
        for run in range(RUNS):
            messages = [entry.user_message for entry in instance.all_logs(f"run-{run}")]
            assert messages == [f"event {number}" for number in range(run, EVENTS_PER_RUN * RUNS, RUNS)]


def test_a_shard_s_engine_is_made_once_and_only_the_latest_run_shards_stay_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    create_engine = sqlalchemy.create_engine

    def counting_engine(url: str, **kwargs: object) -> sqlalchemy.Engine:
        made.append(url)
        return create_engine(url, **kwargs)

    with dagster_instance(tmp_path) as instance:
        storage = instance.event_log_storage
        assert isinstance(storage, PoolSafeSqliteEventLogStorage)
        monkeypatch.setattr(pool_storage.sqlalchemy, "create_engine", counting_engine)
        for number in range(EVENTS_PER_RUN * OPEN_RUN_SHARDS):
            storage.store_event(_message(f"run-{number % OPEN_RUN_SHARDS}", number))
        assert len(made) == OPEN_RUN_SHARDS  # One per run shard, not one per event.
        storage.store_event(_message("one-more-run", 0))
        open_files = sorted(Path(engine.url.database or "").stem for engine in storage._engines.values())
        assert open_files == sorted(["one-more-run", *(f"run-{n}" for n in range(1, OPEN_RUN_SHARDS))])
        with create_engine(f"sqlite:///{storage.path_for_shard('run-0')}").connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        with storage.run_connection("run-1") as connection:
            assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL

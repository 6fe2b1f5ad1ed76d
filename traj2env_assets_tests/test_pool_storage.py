"""A pool slot is claimed by one process at a time on the CLI's SQLite instance.

Dagster's own SQLite storage lets two processes that claim a one-slot pool at the same
moment both have it (CI caught two ``llm`` steps of two ``jobs`` 2 workers side by side).
Four processes here claim one slot at once, round after round, on the instance the
command makes; exactly one wins each round.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
import yaml

from traj2env_assets.cli import BASE_INSTANCE_CONFIG, dagster_home, dagster_instance, instance_config
from traj2env_assets.defs.pool_storage import PoolSafeSqliteEventLogStorage

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

    winners = {round_number: 0 for round_number in range(ROUNDS)}
    for round_number, _, claimed in claims:
        winners[round_number] += claimed
    assert winners == {round_number: 1 for round_number in range(ROUNDS)}


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

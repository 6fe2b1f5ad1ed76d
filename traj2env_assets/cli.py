"""The ``traj2env`` command: one-shot runs of the asset graph from a seed-shaped YAML config."""

from __future__ import annotations

import argparse
import ctypes
import math
import multiprocessing
import os
import signal
import sys
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import FIRST_EXCEPTION, Future, ProcessPoolExecutor, wait
from contextlib import ExitStack, contextmanager
from multiprocessing.queues import Queue
from pathlib import Path

import dagster as dg
import docker.errors
import yaml
from rich.console import Console

from traj2env_assets.atomic_files import atomic_write_text
from traj2env_assets.config import ConfigError, RunSettings, load_run_config
from traj2env_assets.definitions import build_definitions, pipeline_job
from traj2env_assets.defs.jobs import REPORT_JOB
from traj2env_assets.defs.llm import SPEND_SCOPE_TAG
from traj2env_assets.defs.partitions import TRAJECTORIES, trajectories
from traj2env_assets.defs.pool_storage import event_log_storage_config
from traj2env_assets.defs.pool_wait import DEFAULT_MAX_POOL_WAIT_S, PoolWaits, PoolWaitTimeout, sleeping_pool_waits
from traj2env_assets.defs.pools import apply_pool_limits
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.defs.run_liveness import execute_locked, release_dead_work
from traj2env_assets.docker_engine.commands import add_docker_commands
from traj2env_assets.families.registry import registered_families
from traj2env_assets.harbor.validate_command import add_validate_command
from traj2env_assets.layout import DEFAULT_WORKSPACE, Workspace
from traj2env_assets.quality_loop.review_command import add_review_command
from traj2env_assets.quality_loop.rollout_command import add_rollout_command
from traj2env_assets.run_progress import StageCounter, StageProgress, print_summary
from traj2env_assets.sources import register_sources
from traj2env_assets.stages.report.report import REPORT_FILE, RunReport
from traj2env_assets.trajectory_export.export import export_spec
from traj2env_assets.trajectory_export.wheelhouse import WheelhouseError

console = Console(stderr=True)
# The progress bar is the CLI's output; Dagster's per-event console log would bury it.
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


# The instance the CLI creates when it finds none: local SQLite storage under its home,
# whose pool slots hold across processes (defs/pool_storage.py), no usage statistics (and
# so no telemetry banner). The Docker and LLM pools' limits are set per run by
# apply_pool_limits; default_limit covers a pool before that.
BASE_INSTANCE_CONFIG = {"telemetry": {"enabled": False}, "concurrency": {"pools": {"default_limit": 1}}}


def instance_config(home: Path) -> dict:
    """The config the CLI writes for an instance at ``home`` (named by its absolute path:
    whoever opens the instance need not set ``DAGSTER_HOME``)."""
    return {**BASE_INSTANCE_CONFIG, "event_log_storage": event_log_storage_config(str(home))}


def _written_by_the_command(config: object) -> bool:
    """An instance config the command wrote: an earlier version's, or this one's for a home
    since moved (a workspace copied elsewhere). Either is rewritten; an edited one is the user's."""
    if config == BASE_INSTANCE_CONFIG:
        return True
    try:
        named_home = config["event_log_storage"]["config"]["base_dir"]  # type: ignore[index]
    except (TypeError, KeyError):
        return False
    return isinstance(named_home, str) and config == instance_config(Path(named_home))


def dagster_home(workspace: Path) -> Path:
    """``DAGSTER_HOME`` when set, else ``<workspace>/.dagster``; given an instance config
    (``dagster.yaml``) when it has none or one the command wrote for another home or in an
    earlier version, so Dagster neither warns nor asks about telemetry and pool slots hold
    across worker processes."""
    home = Path(os.environ.get("DAGSTER_HOME") or Workspace(root=workspace).dagster_home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    wanted = instance_config(home)
    if not config.exists():
        _create_instance(home, wanted)
    elif _written_by_the_command(current := yaml.safe_load(config.read_text())) and current != wanted:
        atomic_write_text(config, yaml.safe_dump(wanted, sort_keys=False))
    return home


def _create_instance(home: Path, config: dict) -> None:
    """Make the instance's storage, then its ``dagster.yaml``: whoever sees the config
    finds the databases made. Dagster stamps a new SQLite database's schema version
    without a transaction, so a reader that opened the instance while the command was
    making it (a test, ``dagster dev``) stamped it too, and every later open failed with
    alembic's "more than one head"."""
    draft = home / "dagster.yaml.draft"
    draft.write_text(yaml.safe_dump(config, sort_keys=False))
    with dg.DagsterInstance.from_config(str(home), config_filename=draft.name):
        pass
    draft.replace(home / "dagster.yaml")


@contextmanager
def dagster_instance(workspace: Path) -> Iterator[dg.DagsterInstance]:
    """The run's instance, with ``DAGSTER_HOME`` pointing at it while it is open (Dagster's
    telemetry and storage helpers read the variable, not the instance)."""
    home = dagster_home(workspace)
    previous = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            yield instance
    finally:
        if previous is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = previous


BATCH_SIZE = 32
# Dagster's switch for one ASSET_MATERIALIZATION_PLANNED event per asset of a range run
# instead of one per asset and partition (dagster/_core/storage/event_log/base.py). Event
# writes are most of a warm run's time. Its cost, partitions of a failed range run not
# marked failed, does not reach the user: a failed batch is rerun key by key without it.
PLANNED_EVENTS_SWITCH = "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS"


def batch_size(keys: int, jobs: int) -> int:
    """BATCH_SIZE, or less so that ``jobs`` batches share the keys and every worker gets one."""
    return max(1, min(BATCH_SIZE, math.ceil(keys / jobs)))


def partition_batches(instance: dg.DagsterInstance, keys: list[str], size: int = BATCH_SIZE) -> list[list[str]]:
    """Contiguous runs of ``keys`` in the instance's partition order, at most ``size`` long.

    One run per batch costs far less than one run per trajectory (process-wide event and
    step overhead), and a range run needs keys that are contiguous in insertion order.
    """
    wanted = set(keys)
    batches: list[list[str]] = []
    current: list[str] = []
    for key in trajectories.get_partition_keys(dynamic_partitions_store=instance):
        if key in wanted and len(current) < size:
            current.append(key)
            continue
        if current:
            batches.append(current)
        current = [key] if key in wanted else []
    if current:
        batches.append(current)
    return batches


@contextmanager
def _one_planned_event_per_asset() -> Iterator[None]:
    previous = os.environ.get(PLANNED_EVENTS_SWITCH)
    os.environ[PLANNED_EVENTS_SWITCH] = "true"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(PLANNED_EVENTS_SWITCH)
        else:
            os.environ[PLANNED_EVENTS_SWITCH] = previous


def run_partitions(
    job: dg.JobDefinition,
    instance: dg.DagsterInstance,
    batch: list[str],
    run_tags: dict[str, str],
    waits: PoolWaits,
) -> list[str]:
    """Run ``batch`` in one range run; if it fails, rerun its keys one by one. Returns failed keys.
    A run that gave up waiting for a pool slot ends the command (the next would wait as long)."""
    if len(batch) > 1:
        tags = {
            **run_tags,
            "dagster/asset_partition_range_start": batch[0],
            "dagster/asset_partition_range_end": batch[-1],
        }
        with _one_planned_event_per_asset():
            result = execute_locked(job, instance, run_config=QUIET_RUN_CONFIG, tags=tags, raise_on_error=False)
        waits.raise_if_gave_up()
        if result.success:
            return []
    failed = []
    for key in batch:
        result = execute_locked(
            job, instance, run_config=QUIET_RUN_CONFIG, partition_key=key, tags=run_tags, raise_on_error=False
        )
        waits.raise_if_gave_up()
        if not result.success:
            failed.append(key)
    return failed


def generate(
    settings: RunSettings, summary: Console | None = None, *, max_pool_wait_s: float = DEFAULT_MAX_POOL_WAIT_S
) -> Path:
    """Register the sources, run every stage per trajectory in-process, write report.json
    and the funnel files, and print the funnel and top skip reasons to ``summary``.
    Raises PoolWaitTimeout if a step waited longer than ``max_pool_wait_s`` for a pool slot."""
    workspace = Workspace(root=settings.workspace)
    with dagster_instance(settings.workspace) as instance:
        report = _generate(settings, workspace, instance, max_pool_wait_s)
    print_summary(summary or Console(), RunReport.model_validate_json(report.read_text(encoding="utf-8")))
    return report


def _generate(
    settings: RunSettings, workspace: Workspace, instance: dg.DagsterInstance, max_pool_wait_s: float
) -> Path:
    options = settings.options
    # A killed earlier run must not keep this one waiting for what it held.
    release_dead_work(instance)
    registration = register_sources(workspace, settings.source.path, settings.source.format, options.limit)
    keys = registration.new + registration.changed + registration.unchanged
    instance.add_dynamic_partitions(TRAJECTORIES, keys)
    apply_pool_limits(instance, options)
    # Every run of this generate shares one LLM spend ledger (and its cap).
    run_tags = {SPEND_SCOPE_TAG: f"generate-{uuid.uuid4().hex[:12]}"}
    families = registered_families()
    defs = build_definitions(PipelineResource.from_settings(settings), families=families)
    batches = partition_batches(instance, keys, batch_size(len(keys), options.jobs))
    with StageProgress(console) as progress:
        counter = StageCounter(workspace, families.names(), progress, progress.add_task("", total=len(keys)))
        with counter.refreshing():
            if min(options.jobs, len(batches)) > 1:
                failures = _run_batches_in_workers(settings, batches, run_tags, counter, progress, max_pool_wait_s)
            else:
                job = pipeline_job(defs, families, options.families)
                failures = _run_batches_here(job, instance, batches, run_tags, counter, progress, max_pool_wait_s)
    execute_locked(defs.resolve_job_def(REPORT_JOB), instance, run_config=QUIET_RUN_CONFIG, tags=run_tags)
    if failures:
        console.print(f"[yellow]{len(failures)} trajectories had a failed step: {', '.join(failures)}")
    if registration.rejected:
        console.print(f"{len(registration.rejected)} inputs rejected (reasons in report.json)")
    return settings.output.destination / REPORT_FILE


def _run_batches_here(
    job: dg.JobDefinition,
    instance: dg.DagsterInstance,
    batches: list[list[str]],
    run_tags: dict[str, str],
    counter: StageCounter,
    progress: StageProgress,
    max_pool_wait_s: float,
) -> list[str]:
    """One batch after another in this process (``jobs`` 1, or a single batch): no worker
    process to start, which would cost more than the batch."""
    failures: list[str] = []
    waits = PoolWaits(max_pool_wait_s, progress.show_waiting)
    with sleeping_pool_waits(waits):
        for batch in batches:
            counter.start_batch(batch)
            failures += run_partitions(job, instance, batch, run_tags, waits)
            counter.finish_batch(batch)
    return failures


# Up to ``jobs`` batches at once, each in a worker process of its own running the same
# in-process range run as ``jobs`` 1 (run lock, sleeping pool waits, failed keys rerun one
# by one). Processes, because the work between Docker calls is CPU-bound Python (event
# writes, stage files, scanning) that threads would serialise on the GIL. Not Dagster's
# multiprocess executor (``execute_job`` on a reconstructable job): it parallelises the
# steps of one run, one process per step, so a range run of a batch would pay a process
# start per step and still write one run's events one after another. Everything the
# batches share crosses processes already: pool slots are claims in the instance
# database, the spend cap is the file-locked ledger of the SPEND_SCOPE_TAG scope, stage
# files and images are content-addressed. Workers are started by spawn: fork would copy
# this process's threads' held locks (progress refresh, Docker client).
_worker_job: dg.JobDefinition | None = None
_worker_instance: dg.DagsterInstance | None = None
_worker_waits: PoolWaits | None = None
# Ends _showing_waits's thread (sent through the queue, so a value, not an identity).
_PUMP_DONE = "traj2env/pool-waits-done"
# Linux prctl option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """A worker dies with the command (kill -9 included), releasing its run locks, so the
    next command's release_dead_work frees its runs' slots as it does for ``jobs`` 1.
    The signal follows the thread that started the worker: ProcessPoolExecutor starts
    them in ``submit``, called by the command's thread, which outlives the pool."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 1:  # The parent died before the call above took effect.
            os._exit(1)


def _init_worker(settings: RunSettings, max_pool_wait_s: float, waiting: Queue) -> None:
    global _worker_job, _worker_instance, _worker_waits
    # Ctrl-C reaches the whole process group: a worker's run stops as a ``jobs`` 1 run does.
    _die_with_parent()
    # Open for the worker's life: the process ends with the pool.
    stack = ExitStack()
    _worker_instance = stack.enter_context(dagster_instance(settings.workspace))
    _worker_waits = stack.enter_context(sleeping_pool_waits(PoolWaits(max_pool_wait_s, waiting.put)))
    families = registered_families()
    defs = build_definitions(PipelineResource.from_settings(settings), families=families)
    _worker_job = pipeline_job(defs, families, settings.options.families)


def _run_batch_in_worker(batch: list[str], run_tags: dict[str, str]) -> list[str]:
    assert _worker_job is not None and _worker_instance is not None and _worker_waits is not None
    return run_partitions(_worker_job, _worker_instance, batch, run_tags, _worker_waits)


@contextmanager
def _showing_waits(waiting: Queue, progress: StageProgress) -> Iterator[None]:
    """The workers' "waiting for a pool slot" lines, shown in this process's progress."""

    def pump() -> None:
        while (message := waiting.get()) != _PUMP_DONE:
            progress.show_waiting(message)

    thread = threading.Thread(target=pump, name="pool-waits", daemon=True)
    thread.start()
    try:
        yield
    finally:
        waiting.put(_PUMP_DONE)
        thread.join()


def _run_batches_in_workers(
    settings: RunSettings,
    batches: list[list[str]],
    run_tags: dict[str, str],
    counter: StageCounter,
    progress: StageProgress,
    max_pool_wait_s: float,
) -> list[str]:
    context = multiprocessing.get_context("spawn")
    waiting: Queue = context.Queue()
    workers = min(settings.options.jobs, len(batches))
    failed: dict[int, list[str]] = {}
    with (
        _showing_waits(waiting, progress),
        ProcessPoolExecutor(
            workers, mp_context=context, initializer=_init_worker, initargs=(settings, max_pool_wait_s, waiting)
        ) as pool,
    ):
        pending: dict[Future[list[str]], int] = {}
        try:
            for index, batch in enumerate(batches):
                pending[pool.submit(_run_batch_in_worker, batch, run_tags)] = index
                # Counted as running from now: a batch not started yet has no stage files.
                counter.start_batch(batch)
            while pending:
                done, _ = wait(pending, return_when=FIRST_EXCEPTION)
                for future in done:
                    index = pending.pop(future)
                    failed[index] = future.result()  # PoolWaitTimeout ends the command.
                    counter.finish_batch(batches[index])
        finally:
            # Batches not started yet are dropped; running ones finish (or die with Ctrl-C).
            pool.shutdown(wait=True, cancel_futures=True)
    # Failed keys in batch order, as one process running them in turn reports them.
    return [key for index in sorted(failed) for key in failed[index]]


def generate_settings(args: argparse.Namespace) -> RunSettings:
    """The run's settings from ``generate``'s arguments; ConfigError says what is wrong."""
    overrides = list(args.pipeline_opt)
    if args.max_spend_usd is not None:
        overrides.append(f"max_llm_spend_usd={args.max_spend_usd}")
    settings = RunSettings.resolve(load_run_config(args.config, overrides, args.llm), args.workspace)
    if not settings.source.path.is_dir():
        raise ConfigError(f"source.path {settings.source.path} is not a folder (config {args.config})")
    return settings


def _generate_command(args: argparse.Namespace) -> int:
    try:
        settings = generate_settings(args)
    except ConfigError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    try:
        report = generate(settings, max_pool_wait_s=args.max_pool_wait)
    except PoolWaitTimeout as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 1
    print(f"report: {report}")
    return 0


def _export_command(args: argparse.Namespace) -> int:
    try:
        summary = export_spec(args.dataset, args.out, registered_families(), wheelhouse=args.wheelhouse)
    except (OSError, ValueError, WheelhouseError, docker.errors.DockerException) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    print(
        f"spec: {summary.spec_dir} ({summary.tasks} tasks: {summary.train} train, {summary.test} test; "
        f"build context {summary.context_files} files, {summary.context_bytes / 2**20:.1f} MiB)"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="traj2env", description="Turn recorded coding-agent sessions into verified Harbor tasks."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="run the pipeline on a folder of trajectories")
    gen.add_argument("--config", type=Path, required=True, help="seed-shaped YAML config")
    gen.add_argument(
        "--pipeline-opt", action="append", default=[], metavar="KEY=VALUE", help="override a pipeline option"
    )
    gen.add_argument("--llm", default=None, help="model for the LLM families, e.g. anthropic/claude-...")
    gen.add_argument(
        "--max-spend-usd",
        type=float,
        default=None,
        metavar="USD",
        help="LLM spend cap for this run (overrides the config's max_llm_spend_usd; 0 is unlimited)",
    )
    gen.add_argument(
        "--workspace",
        type=Path,
        default=DEFAULT_WORKSPACE,
        help="stage outputs root, and home of the outputs the config leaves out (destination, llm_cache_dir); "
        "relative paths written in the config resolve against the current directory",
    )
    gen.add_argument(
        "--max-pool-wait",
        type=float,
        default=DEFAULT_MAX_POOL_WAIT_S,
        metavar="SECONDS",
        help="fail (exit 1) when a step waits longer than this for a Docker or LLM pool slot another run holds",
    )
    gen.set_defaults(handler=_generate_command)
    export = commands.add_parser("export", help="write a Trajectory platform spec for a Harbor dataset")
    export.add_argument("--dataset", type=Path, required=True, help="the published tasks (the config's destination)")
    export.add_argument("--out", type=Path, required=True, help="where to write benchmark/ and upload.py")
    export.add_argument(
        "--wheelhouse",
        type=Path,
        default=None,
        help="a wheelhouse from an earlier export (default: download the harness's wheels from PyPI)",
    )
    export.set_defaults(handler=_export_command)
    add_docker_commands(commands)
    add_validate_command(commands)
    add_review_command(commands)
    add_rollout_command(commands)
    return parser


# The shell's code for a command ended by SIGINT (128 + 2).
INTERRUPTED_EXIT = 130


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except KeyboardInterrupt:
        # Every container and run lock was released on the way out (finally blocks).
        console.print("[yellow]interrupted[/yellow]")
        return INTERRUPTED_EXIT


if __name__ == "__main__":
    sys.exit(main())

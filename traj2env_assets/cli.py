"""The ``traj2env`` command: one-shot runs of the asset graph from a seed-shaped YAML config."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from traj2env_assets.config import ConfigError, RunSettings, load_run_config
from traj2env_assets.defs.llm import SPEND_SCOPE_TAG
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.pools import apply_pool_limits
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.definitions import PIPELINE_JOB, REPORT_JOB, build_definitions
from traj2env_assets.docker_engine.commands import add_docker_commands
from traj2env_assets.report import REPORT_FILE
from traj2env_assets.sources import register_sources
from traj2env_assets.workspace import Workspace

console = Console(stderr=True)
# The progress bar is the CLI's output; Dagster's per-event console log would bury it.
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def ensure_dagster_home() -> Path:
    """Use DAGSTER_HOME, or a local ``.dagster_home`` seeded from the repository's dagster.yaml."""
    if os.environ.get("DAGSTER_HOME"):
        home = Path(os.environ["DAGSTER_HOME"])
    else:
        home = Path(".dagster_home").resolve()
        os.environ["DAGSTER_HOME"] = str(home)
    home.mkdir(parents=True, exist_ok=True)
    template = Path("dagster.yaml")
    if not (home / "dagster.yaml").exists() and template.is_file():
        shutil.copyfile(template, home / "dagster.yaml")
    return home


BATCH_SIZE = 32
# Dagster's switch for one ASSET_MATERIALIZATION_PLANNED event per asset of a range run
# instead of one per asset and partition (dagster/_core/storage/event_log/base.py). Event
# writes are most of a warm run's time. Its cost, partitions of a failed range run not
# marked failed, does not reach the user: a failed batch is rerun key by key without it.
PLANNED_EVENTS_SWITCH = "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS"


def partition_batches(instance: dg.DagsterInstance, keys: list[str]) -> list[list[str]]:
    """Contiguous runs of ``keys`` in the instance's partition order, at most BATCH_SIZE long.

    One run per batch costs far less than one run per trajectory (process-wide event and
    step overhead), and a range run needs keys that are contiguous in insertion order.
    """
    wanted = set(keys)
    batches: list[list[str]] = []
    current: list[str] = []
    for key in trajectories.get_partition_keys(dynamic_partitions_store=instance):
        if key in wanted and len(current) < BATCH_SIZE:
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
    job: dg.JobDefinition, instance: dg.DagsterInstance, batch: list[str], run_tags: dict[str, str]
) -> list[str]:
    """Run ``batch`` in one range run; if it fails, rerun its keys one by one. Returns failed keys."""
    if len(batch) > 1:
        tags = {
            **run_tags,
            "dagster/asset_partition_range_start": batch[0],
            "dagster/asset_partition_range_end": batch[-1],
        }
        with _one_planned_event_per_asset():
            result = job.execute_in_process(
                run_config=QUIET_RUN_CONFIG, instance=instance, tags=tags, raise_on_error=False
            )
        if result.success:
            return []
    failed = []
    for key in batch:
        result = job.execute_in_process(
            run_config=QUIET_RUN_CONFIG, partition_key=key, instance=instance, tags=run_tags, raise_on_error=False
        )
        if not result.success:
            failed.append(key)
    return failed


def generate(settings: RunSettings) -> Path:
    """Register the sources, run every stage per trajectory in-process, write report.json."""
    ensure_dagster_home()
    instance = dg.DagsterInstance.get()
    workspace = Workspace(root=settings.workspace)
    options = settings.options
    registration = register_sources(workspace, settings.source.path, settings.source.format, options.limit)
    keys = registration.new + registration.changed + registration.unchanged
    instance.add_dynamic_partitions(trajectories.name, keys)
    apply_pool_limits(instance, options)
    # Every run of this generate shares one LLM spend ledger (and its cap).
    run_tags = {SPEND_SCOPE_TAG: f"generate-{uuid.uuid4().hex[:12]}"}
    defs = build_definitions(PipelineResource.from_settings(settings))
    pipeline_job = defs.resolve_job_def(PIPELINE_JOB)
    failures: list[str] = []
    with Progress(
        TextColumn("[bold]trajectories"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.description}"), console=console,
    ) as progress:
        task = progress.add_task("", total=len(keys))
        for batch in partition_batches(instance, keys):
            progress.update(task, description=batch[0] if len(batch) == 1 else f"{batch[0]} … {batch[-1]}")
            failures += run_partitions(pipeline_job, instance, batch, run_tags)
            progress.advance(task, len(batch))
    defs.resolve_job_def(REPORT_JOB).execute_in_process(run_config=QUIET_RUN_CONFIG, instance=instance, tags=run_tags)
    if failures:
        console.print(f"[yellow]{len(failures)} trajectories had a failed step: {', '.join(failures)}")
    if registration.rejected:
        console.print(f"{len(registration.rejected)} inputs rejected (reasons in report.json)")
    return settings.output.destination / REPORT_FILE


def _generate_command(args: argparse.Namespace) -> int:
    try:
        config = load_run_config(args.config, args.pipeline_opt, args.llm)
    except ConfigError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    report = generate(RunSettings.resolve(config, args.workspace))
    print(f"report: {report}")
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
        "--workspace", type=Path, default=Path("workspace"),
        help="stage outputs root; relative output paths of the config (destination, llm_cache_dir) resolve against it",
    )
    gen.set_defaults(handler=_generate_command)
    add_docker_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())

"""The note's whole upload path, as ``upload.py`` runs it.

1. the build context is checked against the platform's limits (nothing is sent otherwise);
2. ``start_task_diagnostic`` on one representative task; its outcome is printed per task,
   and a failed diagnostic stops here;
3. ``start_push``; the operation id is saved in ``push-operation.json`` beside the spec
   before waiting, so a rerun after a local timeout reconnects with ``get_operation``
   (no second upload) as long as the spec is unchanged;
4. ``BenchmarkOperationError`` (failed, cancelled, partial failure) is caught and every
   unresolved failure printed; the finished operation's file is removed;
5. ``diagnostics.start_benchmark`` on the uploaded spec; results polled and printed per task.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TextIO

from pydantic import BaseModel
from trajectory import BenchmarkSpec, Client, TaskSpec
from trajectory.lib import (
    WorkflowError,
    get_operation,
    start_push,
    start_task_diagnostic,
)
from trajectory.lib.benchmark_operations import (
    BenchmarkOperation,
    BenchmarkOperationError,
)

from traj2env_assets.atomic_files import atomic_write_text
from traj2env_assets.trajectory_export.context import check_context
from traj2env_assets.trajectory_export.layout import BENCHMARK_DIR, OPERATION_FILE
from traj2env_assets.trajectory_export.push import (
    DEFAULT_BENCHMARK_NAME,
    Visibility,
    build_benchmark,
)

TERMINAL_DIAGNOSTIC = {"completed", "failed", "cancelled"}
Status = Literal[
    "ok", "task_diagnostic_failed", "push_failed", "push_pending", "benchmark_diagnostic_failed", "diagnostic_pending"
]


class UploadSettings(BaseModel):
    agent_name: str
    name: str = DEFAULT_BENCHMARK_NAME
    visibility: Visibility = "private"
    build_images: bool = True
    task_diagnostic: bool = True
    benchmark_diagnostic: bool = True
    push_timeout_s: float = 45 * 60
    diagnostic_timeout_s: float = 3 * 3600
    poll_interval_s: float = 5.0
    operation_poll_s: float = 2.0


class SavedOperation(BaseModel):
    """``push-operation.json``: the push a rerun reconnects to."""

    operation_id: str
    benchmark_name: str
    agent_name: str
    spec_fingerprint: str
    """Of the BenchmarkSpec and the context's file list: a re-exported spec pushes anew."""


class TaskOutcome(BaseModel):
    task_id: str
    status: str
    termination_reason: str | None = None
    reward: float | None = None
    failure: dict[str, Any] | None = None


class DiagnosticReport(BaseModel):
    diagnostic_id: str
    status: str
    task_counts: dict[str, int]
    failure: dict[str, Any] | None
    tasks: list[TaskOutcome]

    @property
    def passed(self) -> bool:
        return (
            self.status == "completed"
            and self.failure is None
            and all(task.status == "completed" and task.failure is None for task in self.tasks)
        )


class UploadOutcome(BaseModel):
    status: Status
    task_diagnostic: DiagnosticReport | None = None
    operation_id: str | None = None
    reconnected: bool = False
    bench_id: str | None = None
    push_failures: list[str] = []
    benchmark_diagnostic: DiagnosticReport | None = None


def representative_task(benchmark: BenchmarkSpec) -> TaskSpec:
    """The first task (by name) of the most common family, with the spec's runtime: the
    diagnostic wraps it in a one-task spec with no shared runtime."""
    families = Counter((task.tags or [""])[0] for task in benchmark.tasks)
    family = max(sorted(families), key=lambda name: families[name])
    task = min((t for t in benchmark.tasks if (t.tags or [""])[0] == family), key=lambda t: t.name)
    return task.model_copy(update={"runtime": benchmark.runtime})


def run_upload(client: Client, spec_dir: Path, settings: UploadSettings, out: TextIO) -> UploadOutcome:
    def say(line: str) -> None:
        print(line, file=out, flush=True)

    root = spec_dir / BENCHMARK_DIR
    benchmark = build_benchmark(spec_dir, settings.name, settings.visibility)
    size = check_context(root)
    say(
        f"spec {benchmark.name!r} ({benchmark.visibility}): {len(benchmark.tasks)} tasks, "
        f"build context {size.files} files, {size.bytes:,} bytes"
    )
    operation_file = spec_dir / OPERATION_FILE
    fingerprint = _fingerprint(benchmark, root)
    saved = _saved_operation(operation_file, fingerprint, settings, say)
    outcome = UploadOutcome(status="ok")
    if saved is not None:
        say(f"reconnecting to push operation {saved.operation_id} (saved in {operation_file})")
        operation: BenchmarkOperation = get_operation(client, saved.operation_id)
        outcome.reconnected = True
    else:
        if settings.task_diagnostic:
            task = representative_task(benchmark)
            say(f"task diagnostic on {task.name}")
            try:
                started = start_task_diagnostic(client, task, agent_name=settings.agent_name, root=root)
            except WorkflowError as exc:
                say(f"task diagnostic could not start: {exc}")
                for failure in exc.failures:
                    say(f"  {failure.code}: {failure.message}")
                return outcome.model_copy(update={"status": "task_diagnostic_failed"})
            outcome.task_diagnostic = _await_diagnostic(client, started.benchmark_diagnostic_id, settings, say)
            if outcome.task_diagnostic is None:
                return outcome.model_copy(update={"status": "diagnostic_pending"})
            _print_report("task diagnostic", outcome.task_diagnostic, say)
            if not outcome.task_diagnostic.passed:
                say("task diagnostic failed: fix the reported problem before pushing")
                return outcome.model_copy(update={"status": "task_diagnostic_failed"})
        operation = start_push(
            client,
            benchmark,
            agent_name=settings.agent_name,
            root=root,
            build_images=settings.build_images,
            progress=lambda _: None,
        )
        atomic_write_text(
            operation_file,
            SavedOperation(
                operation_id=operation.id,
                benchmark_name=benchmark.name,
                agent_name=settings.agent_name,
                spec_fingerprint=fingerprint,
            ).model_dump_json(indent=2)
            + "\n",
        )
        say(f"push operation {operation.id} (saved in {operation_file})")
    outcome.operation_id = operation.id
    try:
        result = operation.result(timeout=settings.push_timeout_s, poll_interval=settings.operation_poll_s)
    except BenchmarkOperationError as exc:
        outcome.push_failures = [
            f"{f.stage} {f.resource_type} {f.resource_id}: {f.code}: {f.message}" for f in exc.failures
        ]
        say(f"push failed: {exc}")
        for line in outcome.push_failures:
            say(f"  {line}")
        # A failed version cannot be resumed: correct the spec, export and upload again.
        operation_file.unlink(missing_ok=True)
        return outcome.model_copy(update={"status": "push_failed"})
    except TimeoutError:
        say(
            f"push operation {operation.id} still running after {settings.push_timeout_s:g}s; "
            "run upload.py again to reconnect to it"
        )
        return outcome.model_copy(update={"status": "push_pending"})
    outcome.bench_id = result.status.bench_id
    say(f"uploaded: bench_id {outcome.bench_id}, {result.status.registered_tasks} tasks registered")
    if not settings.benchmark_diagnostic:
        return outcome
    if not settings.build_images:
        say("no benchmark diagnostic: its images were not built (--no-build)")
        return outcome
    started = client.diagnostics.start_benchmark(bench_id=outcome.bench_id)
    outcome.benchmark_diagnostic = _await_diagnostic(client, started.benchmark_diagnostic_id, settings, say)
    if outcome.benchmark_diagnostic is None:
        return outcome.model_copy(update={"status": "diagnostic_pending"})
    _print_report("benchmark diagnostic", outcome.benchmark_diagnostic, say)
    if not outcome.benchmark_diagnostic.passed:
        return outcome.model_copy(update={"status": "benchmark_diagnostic_failed"})
    return outcome


def _saved_operation(
    path: Path, fingerprint: str, settings: UploadSettings, say: Callable[[str], None]
) -> SavedOperation | None:
    if not path.is_file():
        return None
    saved = SavedOperation.model_validate_json(path.read_text(encoding="utf-8"))
    if (saved.spec_fingerprint, saved.benchmark_name, saved.agent_name) != (
        fingerprint,
        settings.name,
        settings.agent_name,
    ):
        say(f"{path} is for another spec, name or agent: pushing anew")
        return None
    return saved


def _fingerprint(benchmark: BenchmarkSpec, root: Path) -> str:
    digest = hashlib.sha256(benchmark.model_dump_json().encode())
    for directory, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            stat = (Path(directory) / name).stat()
            digest.update(f"{Path(directory, name).relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _await_diagnostic(
    client: Client, diagnostic_id: str, settings: UploadSettings, say: Callable[[str], None]
) -> DiagnosticReport | None:
    deadline = time.monotonic() + settings.diagnostic_timeout_s
    while client.diagnostics.get_status(diagnostic_id).status not in TERMINAL_DIAGNOSTIC:
        if time.monotonic() >= deadline:
            say(f"diagnostic {diagnostic_id} still running after {settings.diagnostic_timeout_s:g}s")
            return None
        time.sleep(settings.poll_interval_s)
    result = client.diagnostics.get_diagnostics(diagnostic_id)
    return DiagnosticReport(
        diagnostic_id=diagnostic_id,
        status=result.status,
        task_counts=result.task_counts.model_dump(),
        failure=result.failure,
        # termination_reason and reward are in the note's output, not yet in SDK 0.9.31's model.
        tasks=[
            TaskOutcome(
                task_id=task.task_id,
                status=task.status,
                failure=task.failure,
                termination_reason=getattr(task, "termination_reason", None),
                reward=getattr(task, "reward", None),
            )
            for task in result.tasks
        ],
    )


def _print_report(title: str, report: DiagnosticReport, say: Callable[[str], None]) -> None:
    counts = ", ".join(f"{name} {count}" for name, count in report.task_counts.items())
    say(
        f"{title} {report.diagnostic_id}: {report.status} ({counts})"
        + (f"; failure: {json.dumps(report.failure)}" if report.failure else "")
    )
    for task in report.tasks:
        reward = "none" if task.reward is None else f"{task.reward:g}"
        say(
            f"  {task.task_id} {task.status} ending={task.termination_reason or '-'} reward={reward}"
            + (f" failure={json.dumps(task.failure)}" if task.failure else "")
        )

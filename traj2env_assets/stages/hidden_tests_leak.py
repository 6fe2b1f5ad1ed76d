"""The ``hidden_tests_leak`` drop: which candidate a sibling leak (``traj2env_assets.harbor.leaks``)
removes, and in which stage.

Publish decides for good (``traj2env_assets.stages.publish.publishing``): a candidate that hides
a test that a live candidate anywhere in the workspace or a published task shows is dropped,
and so is one that shows a test a published task hides.

The trials stage drops early only what publish would drop anyway, so no matrix runs for it
(in the bundled samples a third of the trials did): a candidate that leaks against a
published task (a published task is never taken back), or that hides a test a candidate of
the same run (the batch of trajectories one range run covers) shows once that candidate
has passed its trials (the run's publish sees it live). A hider whose shower has no such
verdict yet (in its run, or a live candidate of another run) waits for the stage's second
wave, planned after the first wave's matrices: by then the shower may have passed or been
published (the hider is dropped), failed (it runs its matrix), or still be undecided (it
runs its matrix, and publish decides as before). So the trials stage never drops a
candidate that publish would keep and the published tasks are the same; only the stage and
reason a drop is recorded under can differ (a hider that would also have failed its trials
is recorded as a leak).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from traj2env_assets.drops import Drop
from traj2env_assets.harbor.leaks import TaskTests, hidden_and_shown_elsewhere, shown_and_hidden_elsewhere, task_tests
from traj2env_assets.layout import TaskLayout, Workspace
from traj2env_assets.lifecycle.status import CandidateRef, CandidateStatus, staged_task_dir

HIDDEN_TESTS_LEAK = "hidden_tests_leak"

# A candidate in one of these stages has passed its trials: only publish can still drop it.
_PAST_TRIALS = ("trials", "publish")


def dataset_tests(destination: Path) -> dict[str, TaskTests]:
    """The tests of every task published in ``destination``, by task id."""
    if not destination.is_dir():
        return {}
    configs = ((path, TaskLayout(path).config_path) for path in sorted(destination.iterdir()))
    return {path.name: _published_tests(path, _stamp(config)) for path, config in configs if config.is_file()}


def _stamp(path: Path) -> tuple[int, int, int]:
    stat = path.stat()
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


@functools.lru_cache(maxsize=65536)
def _published_tests(task_dir: Path, config_stamp: tuple[int, int, int]) -> TaskTests:
    """Parsed once per process while the task's ``task.toml`` is the same file: a published
    folder is moved into place whole (``published_signatures`` keys its cache the same way),
    and the trials stage's plans and publish read the whole dataset in every run."""
    return task_tests(task_dir)


def _live_and_staged(workspace: Workspace, status: CandidateStatus) -> bool:
    return status.drop is None and status.image is not None and staged_task_dir(workspace, status.ref).is_dir()


def live_staged_tests(workspace: Workspace) -> dict[str, TaskTests]:
    """The tests of every candidate of the workspace that has a staged task and no drop."""
    live = _live_staged(workspace, {})
    return {status.task_id: task_tests(staged_task_dir(workspace, status.ref)) for status in live}


def leak_drop(tests: TaskTests, live: Iterable[TaskTests], dataset: Mapping[str, TaskTests]) -> Drop | None:
    """Publish's rule: the candidate whose tests are ``tests`` hides a test that a live
    candidate or a published task shows, or shows a test that a published task hides."""
    earlier = [other for task_id, other in dataset.items() if task_id != tests.task_id]
    leaks = hidden_and_shown_elsewhere(tests, [*live, *earlier]) + shown_and_hidden_elsewhere(tests, earlier)
    if not leaks:
        return None
    more = f" (+{len(leaks) - 3} more)" if len(leaks) > 3 else ""
    return Drop(reason=HIDDEN_TESTS_LEAK, detail="; ".join(leaks[:3]) + more)


class EarlyLeaks(NamedTuple):
    """What the trials stage decides about leaks before it runs a matrix."""

    drops: dict[CandidateRef, Drop]
    """Candidates publish would drop as ``hidden_tests_leak`` whatever happens to the others."""
    after_showers: set[CandidateRef]
    """Hiders whose shower has no trials verdict in this run yet: they wait for the second wave."""


def early_leaks(
    workspace: Workspace, destination: Path, to_run: list[CandidateStatus], run: list[CandidateStatus]
) -> EarlyLeaks:
    """``to_run``: the candidates whose matrix would run now; ``run``: every candidate of the
    run's partitions as it stands, ``to_run`` among them."""
    tests: dict[CandidateRef, TaskTests] = {}

    def tests_of(status: CandidateStatus) -> TaskTests:
        if status.ref not in tests:
            tests[status.ref] = task_tests(staged_task_dir(workspace, status.ref))
        return tests[status.ref]

    if not any(tests_of(status).hidden or tests_of(status).shown for status in to_run):
        return EarlyLeaks(drops={}, after_showers=set())
    in_run = {status.ref: status for status in run}
    # Passed its trials in this run: the run's publish sees it live, whatever it decides.
    passed = [status for status in run if _live_and_staged(workspace, status) and status.reached in _PAST_TRIALS]
    passed_refs = {status.ref for status in passed}
    undecided = [status for status in _live_staged(workspace, in_run) if status.ref not in passed_refs]
    dataset = dataset_tests(destination)
    drops: dict[CandidateRef, Drop] = {}
    after_showers: set[CandidateRef] = set()
    for status in to_run:
        certain = [tests_of(other) for other in passed if other.ref != status.ref]
        if (drop := leak_drop(tests_of(status), certain, dataset)) is not None:
            drops[status.ref] = drop
        elif hidden_and_shown_elsewhere(
            tests_of(status), [tests_of(other) for other in undecided if other.ref != status.ref]
        ):
            after_showers.add(status.ref)
    return EarlyLeaks(drops=drops, after_showers=after_showers)


def _live_staged(workspace: Workspace, current: Mapping[CandidateRef, CandidateStatus]) -> list[CandidateStatus]:
    """Every live candidate of the workspace with a staged task, as ``current`` has it if there."""
    found = []
    for path in workspace.every_status_file():
        status = CandidateStatus.model_validate_json(path.read_text(encoding="utf-8"))
        status = current.get(status.ref, status)
        if _live_and_staged(workspace, status):
            found.append(status)
    return found

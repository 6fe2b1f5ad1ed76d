"""The Harbor dataset next to the published tasks: a manifest and source-disjoint splits.

``<destination>/`` is a local Harbor dataset (every task directory directly under it;
``harbor run -p <destination>`` runs them all). Beside the tasks this module writes:

- ``dataset.json``  :class:`DatasetManifest`: per task its id, family, ``source_trace``,
  content hash and split; tasks whose ``task.toml`` is not ours are listed with a reason.
- ``splits.json``   :class:`SplitAssignments`: the split of every source trace ever seen.

Reviews (``traj2env review``) and rollouts (``traj2env rollout``) are kept in the manifest
across rewrites: a run that publishes more tasks never forgets a reviewer's decision or a
model's attempts.

The manifest also names the Harbor environment that runs the tasks
(:data:`HARBOR_ENVIRONMENT`): every task is ``no-network``, and Harbor's stock
``--env docker`` enforces that only with images it pulls from Docker Hub by digest.

Splits are by source trace, so a source's tasks are never in both train and test, and
sources whose tasks are near-duplicates (one group, ``quality.near_duplicates``) share a
split. A new source is assigned by a seeded shuffle that brings the test share of all sources
to about :data:`TEST_FRACTION` (as the Trajectory platform does for tasks without a
split); a source assigned once keeps its split on every rerun, so a task never moves.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
import threading
import tomllib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.harbor.task_toml import TaskToml
from traj2env_assets.layout import TaskLayout
from traj2env_assets.quality.near_duplicates import near_duplicate_groups, task_signature

MANIFEST_FILE = "dataset.json"
SPLITS_FILE = "splits.json"
TEST_FRACTION = 0.15
SPLIT_SEED = 15
MANIFEST_VERSION = "1"

DEFAULT_DATASET_NAME = "trajectory-tasks"
DEFAULT_ORG = "local"
HARBOR_ENVIRONMENT = "traj2env_assets.harbor.no_network_environment:NoNetworkDockerEnvironment"
"""``harbor run -p <destination> -a oracle --env HARBOR_ENVIRONMENT`` runs the tasks on any
Docker engine; plain ``--env docker`` only where the engine can pull Harbor's kernel-probe
and egress-sidecar base images (see ``no_network_environment.py``)."""

Split = Literal["train", "test"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatasetTask(_Strict):
    task_id: str
    family: str
    source_trace: str
    content_hash: str
    """sha256 over every file's relative path and bytes (see :func:`task_content_hash`)."""
    split: Split
    project: str | None = None
    group: str | None = None
    """Its near-duplicate group (``traj2env_assets.quality.near_duplicates``): the group's
    smallest task id; a group is never split between train and test."""


class SkippedTaskDir(_Strict):
    path: str
    reason: str


Decision = Literal["accept", "reject"]


class TaskReview(_Strict):
    """A reviewer's decision on one task (``traj2env review``); the latest per task counts."""

    task_id: str
    decision: Decision
    note: str = ""
    reviewer: str = ""
    at: str
    """ISO 8601, UTC."""


class RolloutRun(_Strict):
    """One ``traj2env rollout`` run's trials of one task by one agent and model."""

    at: str
    """When the run started; ISO 8601, UTC."""
    attempts: int
    """Trials that count: verified, and any failure the agent's own (``quality_loop.rollout``)."""
    solved: int
    """Attempts whose reward was full (1.0)."""
    errors: int = 0
    """Trials that failed for the run's reasons (model server, environment): not attempts."""


class ModelRollouts(_Strict):
    """Every rollout of one task by one agent and model; the totals sum ``runs``."""

    agent: str
    model: str
    attempts: int
    solved: int
    solve_rate: float | None
    """``solved / attempts``; None while there is no attempt (only errors)."""
    runs: list[RolloutRun]

    @model_validator(mode="after")
    def _totals_sum_the_runs(self) -> ModelRollouts:
        attempts, solved = sum(run.attempts for run in self.runs), sum(run.solved for run in self.runs)
        rate = solved / attempts if attempts else None
        if (self.attempts, self.solved, self.solve_rate) != (attempts, solved, rate):
            raise ValueError(f"{self.agent}/{self.model}: totals do not sum the runs")
        return self


RolloutFlag = Literal["never_solved", "always_solved"]


class TaskRollouts(_Strict):
    """One task's rollouts per agent and model, and its flag (``quality_loop.rollout``)."""

    task_id: str
    models: list[ModelRollouts]
    flag: RolloutFlag | None = None


class DatasetManifest(_Strict):
    schema_version: str = MANIFEST_VERSION
    name: str = DEFAULT_DATASET_NAME
    """``output.dataset_name``: the Trajectory spec's benchmark name by default."""
    org: str = DEFAULT_ORG
    harbor_environment: str = HARBOR_ENVIRONMENT
    """What ``harbor run --env`` needs for these tasks (:data:`HARBOR_ENVIRONMENT`)."""
    seed: int
    test_fraction: float
    tasks: list[DatasetTask] = Field(default_factory=list)
    skipped: list[SkippedTaskDir] = Field(default_factory=list)
    reviews: list[TaskReview] = Field(default_factory=list)
    rollouts: list[TaskRollouts] = Field(default_factory=list)
    groups_across_splits: list[str] = Field(default_factory=list)
    """Near-duplicate groups with tasks in train and in test: only where sources were assigned
    before they were found to be near-duplicates (an assignment is never revised)."""

    def split_of(self, split: Split) -> list[DatasetTask]:
        return [task for task in self.tasks if task.split == split]


class SplitAssignments(_Strict):
    """``splits.json``: the persisted source → split decisions (never revised)."""

    seed: int
    test_fraction: float
    sources: dict[str, Split] = Field(default_factory=dict)


def task_content_hash(task_dir: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in task_dir.rglob("*") if p.is_file() and not p.is_symlink()):
        relative = path.relative_to(task_dir).as_posix().encode()
        digest.update(len(relative).to_bytes(4, "big") + relative)
        content = path.read_bytes()
        digest.update(len(content).to_bytes(8, "big") + content)
    return digest.hexdigest()


def _linked_units(sources: set[str], linked: Iterable[Iterable[str]]) -> list[list[str]]:
    """The sources, in sets that must share a split (union of every linked set), sorted."""
    parent = {source: source for source in sources}

    def root(source: str) -> str:
        while parent[source] != source:
            source = parent[source] = parent[parent[source]]
        return source

    for group in linked:
        members = sorted(set(group) & sources)
        for member in members[1:]:
            first, second = sorted((root(members[0]), root(member)))
            parent[second] = first
    units: dict[str, list[str]] = {}
    for source in sorted(sources):
        units.setdefault(root(source), []).append(source)
    return list(units.values())


def assign_splits(
    previous: SplitAssignments | None,
    sources: list[str],
    *,
    linked: Iterable[Iterable[str]] = (),
    seed: int = SPLIT_SEED,
    fraction: float = TEST_FRACTION,
) -> SplitAssignments:
    """Keep every earlier assignment; put enough shuffled new sources in test that about
    ``fraction`` of all sources are test sources. Sources in one ``linked`` set (their tasks
    are near-duplicates) share a split: a new one joins its assigned partners' split, and
    new partners are drawn as one."""
    kept = dict(previous.sources) if previous else {}
    every = set(kept) | set(sources)
    new = sorted(every - set(kept))
    draws: list[list[str]] = []
    for unit in _linked_units(every, linked):
        fresh = [source for source in unit if source not in kept]
        if fresh and (assigned := [kept[source] for source in unit if source in kept]):
            for source in fresh:
                kept[source] = assigned[0]
        elif fresh:
            draws.append(fresh)
    wanted_test = round(fraction * len(every))
    need = max(0, wanted_test - sum(1 for split in kept.values() if split == "test"))
    # The shuffle depends on the seed and the new sources alone, so the same inputs always
    # give the same splits (string hashing would vary per process).
    random.Random(f"{seed}:{','.join(new)}").shuffle(draws)
    for unit in draws:
        split: Split = "test" if len(unit) <= need else "train"
        need -= len(unit) if split == "test" else 0
        for source in unit:
            kept[source] = split
    return SplitAssignments(seed=seed, test_fraction=fraction, sources=dict(sorted(kept.items())))


def read_task_toml(task_dir: Path) -> TaskToml:
    return TaskToml.model_validate(tomllib.loads(TaskLayout(task_dir).config_path.read_text(encoding="utf-8")))


def read_splits(destination: Path) -> SplitAssignments | None:
    path = destination / SPLITS_FILE
    if not path.is_file():
        return None
    return SplitAssignments.model_validate_json(path.read_text(encoding="utf-8"))


def read_manifest(destination: Path) -> DatasetManifest:
    return DatasetManifest.model_validate_json((destination / MANIFEST_FILE).read_text(encoding="utf-8"))


# Each thread's depth of dataset_lock per folder: a holder may call write_dataset, which
# takes it too (review, rollout), and another thread must still wait for it.
_held = threading.local()


@contextmanager
def dataset_lock(destination: Path) -> Iterator[None]:
    """Held by every read-modify-write of the manifest (a run's dataset asset, ``traj2env
    review``, ``traj2env rollout``), so none of them writes over what another just added.

    An ``flock`` of the destination folder itself, not filelock's lock file: the folder is
    the published dataset, and a file left in it would be shipped with the tasks."""
    key = str(destination.resolve())
    depth: dict[str, int] = _held.__dict__.setdefault("depth", {})
    if depth.get(key):
        depth[key] += 1
        try:
            yield
        finally:
            depth[key] -= 1
        return
    folder = os.open(destination, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        depth[key] = 1
        try:
            yield
        finally:
            depth[key] = 0
    finally:
        os.close(folder)  # Closing the descriptor releases the lock.


def write_dataset(
    destination: Path,
    *,
    name: str = DEFAULT_DATASET_NAME,
    org: str = DEFAULT_ORG,
    seed: int = SPLIT_SEED,
    fraction: float = TEST_FRACTION,
) -> DatasetManifest:
    """Scan ``destination`` for task directories; write ``splits.json`` and ``dataset.json``."""
    destination.mkdir(parents=True, exist_ok=True)
    with dataset_lock(destination):
        return _write_dataset(destination, name=name, org=org, seed=seed, fraction=fraction)


def _write_dataset(destination: Path, *, name: str, org: str, seed: int, fraction: float) -> DatasetManifest:
    found: list[tuple[str, TaskToml, str]] = []
    skipped: list[SkippedTaskDir] = []
    task_dirs = sorted(p for p in destination.iterdir() if p.is_dir() and not p.name.startswith("."))
    for task_dir in task_dirs:
        try:
            toml = read_task_toml(task_dir)
        except FileNotFoundError:
            skipped.append(SkippedTaskDir(path=task_dir.name, reason="no task.toml"))
            continue
        except (tomllib.TOMLDecodeError, ValidationError) as exc:
            skipped.append(SkippedTaskDir(path=task_dir.name, reason=f"task.toml is not a traj2env task: {exc}"[:500]))
            continue
        found.append((task_dir.name, toml, task_content_hash(task_dir)))
    previous = read_splits(destination)
    if previous and (previous.seed, previous.test_fraction) != (seed, fraction):
        # Changing the seed or share must not silently move tasks: start again explicitly.
        raise ValueError(
            f"{destination / SPLITS_FILE} was made with seed {previous.seed} and fraction "
            f"{previous.test_fraction}; delete it to reassign splits"
        )
    groups = near_duplicate_groups(
        {task_id: (toml.metadata.project or "", task_signature(destination / task_id)) for task_id, toml, _ in found}
    )
    source_of = {task_id: toml.metadata.source_trace for task_id, toml, _ in found}
    linked: dict[str, set[str]] = {}
    for task_id, group in groups.items():
        linked.setdefault(group, set()).add(source_of[task_id])
    splits = assign_splits(previous, list(source_of.values()), linked=linked.values(), seed=seed, fraction=fraction)
    earlier = read_manifest(destination) if (destination / MANIFEST_FILE).is_file() else None
    tasks = [
        DatasetTask(
            task_id=task_id,
            family=toml.metadata.family,
            source_trace=toml.metadata.source_trace,
            content_hash=content_hash,
            split=splits.sources[toml.metadata.source_trace],
            project=toml.metadata.project,
            group=groups[task_id],
        )
        for task_id, toml, content_hash in found
    ]
    split_sets: dict[str, set[Split]] = {}
    for task in tasks:
        split_sets.setdefault(task.group or task.task_id, set()).add(task.split)
    manifest = DatasetManifest(
        name=name,
        org=org,
        seed=seed,
        test_fraction=fraction,
        tasks=tasks,
        skipped=skipped,
        reviews=earlier.reviews if earlier else [],
        rollouts=earlier.rollouts if earlier else [],
        groups_across_splits=sorted(group for group, found_in in split_sets.items() if len(found_in) > 1),
    )
    atomic_write_json(destination / SPLITS_FILE, splits)
    atomic_write_json(destination / MANIFEST_FILE, manifest)
    return manifest

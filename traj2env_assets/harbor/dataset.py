"""The Harbor dataset next to the published tasks: a manifest and source-disjoint splits.

``<destination>/`` is a local Harbor dataset (every task directory directly under it;
``harbor run -p <destination>`` runs them all). Beside the tasks this module writes:

- ``dataset.json``  :class:`DatasetManifest`: per task its id, family, ``source_trace``,
  content hash and split; tasks whose ``task.toml`` is not ours are listed with a reason.
- ``splits.json``   :class:`SplitAssignments`: the split of every source trace ever seen.

The manifest also names the Harbor environment that runs the tasks
(:data:`HARBOR_ENVIRONMENT`): every task is ``no-network``, and Harbor's stock
``--env docker`` enforces that only with images it pulls from Docker Hub by digest.

Splits are by source trace, so a source's tasks are never in both train and test. A
new source is assigned by a seeded shuffle that brings the test share of all sources
to about :data:`TEST_FRACTION` (as the Trajectory platform does for tasks without a
split); a source assigned once keeps its split on every rerun, so a task never moves.
"""

from __future__ import annotations

import hashlib
import random
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from traj2env_assets.harbor.task_toml import TaskToml
from traj2env_assets.workspace import atomic_write_json

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


class SkippedTaskDir(_Strict):
    path: str
    reason: str


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


def assign_splits(
    previous: SplitAssignments | None, sources: list[str], *, seed: int = SPLIT_SEED, fraction: float = TEST_FRACTION
) -> SplitAssignments:
    """Keep every earlier assignment; put enough shuffled new sources in test that about
    ``fraction`` of all sources are test sources."""
    kept = dict(previous.sources) if previous else {}
    new = sorted(set(sources) - set(kept))
    every = set(kept) | set(new)
    wanted_test = round(fraction * len(every))
    have_test = sum(1 for split in kept.values() if split == "test")
    # The shuffle depends on the seed and the new sources alone, so the same inputs always
    # give the same splits (string hashing would vary per process).
    random.Random(f"{seed}:{','.join(new)}").shuffle(new)
    test_count = min(len(new), max(0, wanted_test - have_test))
    for index, source in enumerate(new):
        kept[source] = "test" if index < test_count else "train"
    return SplitAssignments(seed=seed, test_fraction=fraction, sources=dict(sorted(kept.items())))


def read_task_toml(task_dir: Path) -> TaskToml:
    return TaskToml.model_validate(tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8")))


def read_splits(destination: Path) -> SplitAssignments | None:
    path = destination / SPLITS_FILE
    if not path.is_file():
        return None
    return SplitAssignments.model_validate_json(path.read_text(encoding="utf-8"))


def read_manifest(destination: Path) -> DatasetManifest:
    return DatasetManifest.model_validate_json((destination / MANIFEST_FILE).read_text(encoding="utf-8"))


def write_dataset(
    destination: Path,
    *,
    name: str = DEFAULT_DATASET_NAME,
    org: str = DEFAULT_ORG,
    seed: int = SPLIT_SEED,
    fraction: float = TEST_FRACTION,
) -> DatasetManifest:
    """Scan ``destination`` for task directories; write ``splits.json`` and ``dataset.json``."""
    found: list[tuple[str, TaskToml, str]] = []
    skipped: list[SkippedTaskDir] = []
    destination.mkdir(parents=True, exist_ok=True)
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
    splits = assign_splits(previous, [toml.metadata.source_trace for _, toml, _ in found], seed=seed, fraction=fraction)
    manifest = DatasetManifest(
        name=name,
        org=org,
        seed=seed,
        test_fraction=fraction,
        tasks=[
            DatasetTask(
                task_id=task_id,
                family=toml.metadata.family,
                source_trace=toml.metadata.source_trace,
                content_hash=content_hash,
                split=splits.sources[toml.metadata.source_trace],
            )
            for task_id, toml, content_hash in found
        ],
        skipped=skipped,
    )
    atomic_write_json(destination / SPLITS_FILE, splits)
    atomic_write_json(destination / MANIFEST_FILE, manifest)
    return manifest

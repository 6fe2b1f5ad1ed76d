"""Each published task's project and near-duplicate signature, kept in the workspace so a
publish reads every task already published once, not once per task it publishes.

The caps (``stages.publish.publishing``) compare the task being published with every published
task of its project; signing a task reads all its files and diffs its solution, so signing
every peer on every publish grows with the square of the dataset. A published task folder
is written once (moved into place whole), so its ``task.toml``'s inode, size and mtime say
whether the cached entry still describes it; a folder replaced by a later publish or by
hand has a new ``task.toml`` and is signed again. A content hash would read every file,
which is the cost this avoids.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.harbor.dataset import read_task_toml
from traj2env_assets.layout import TaskLayout
from traj2env_assets.quality.near_duplicates import task_signature

if TYPE_CHECKING:
    from datasketch import LeanMinHash, MinHash


class PublishedSignature(BaseModel):
    """One published task: ``<workspace>/dedupe/signatures/<task id>.json``."""

    fingerprint: str
    project: str | None = None
    seed: int
    scheme: str
    hashvalues: list[int]

    def signature(self) -> LeanMinHash:
        from datasketch import LeanMinHash  # scipy's import cost, paid when used

        return LeanMinHash(seed=self.seed, hashvalues=self.hashvalues, scheme=self.scheme)


def _fingerprint(task_dir: Path) -> str:
    stat = TaskLayout(task_dir).config_path.stat()
    return f"{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}"


class PublishedSignatures:
    """The cache under ``root`` (one JSON file per task id)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def project_and_signature(self, task_dir: Path) -> tuple[str | None, MinHash | LeanMinHash]:
        """The published task's project and signature, from the cache while it is current."""
        path = self.root / f"{task_dir.name}.json"
        fingerprint = _fingerprint(task_dir)
        try:
            cached = PublishedSignature.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            cached = None
        if cached is not None and cached.fingerprint == fingerprint:
            return cached.project, cached.signature()
        project, signature = read_task_toml(task_dir).metadata.project, task_signature(task_dir)
        atomic_write_json(
            path,
            PublishedSignature(
                fingerprint=fingerprint,
                project=project,
                seed=signature.seed,
                scheme=signature.scheme,
                hashvalues=[int(value) for value in signature.hashvalues],
            ),
        )
        return project, signature

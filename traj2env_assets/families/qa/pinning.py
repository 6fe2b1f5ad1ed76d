"""Pin each qa input to the dataset commit current at the trajectory's date, through ``huggingface_hub``.

For every input: the repository's commit list (``HfApi.list_repo_commits``), the newest
commit made at or before the trajectory's moment, then the file at that revision
(``hf_hub_download``), whose sha256 the image checks at build time. Anything that
fails (no such repository, no commit that old, no such file at that commit, the hub
unreachable) is ``input_not_resolvable``.

The hub is ``$HF_ENDPOINT`` (default ``https://huggingface.co``), read at call time so
a test can point it at a local fake. Downloads go to the hub client's own cache under
``<cache root>/qa/hub``; each resolved pin is recorded under ``<cache root>/qa/pins``
so the later stages (which rebuild the task spec) resolve it again without the network.
"""

from __future__ import annotations

import hashlib
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, ValidationError

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.conventions import file_sha256
from traj2env_assets.families.contract import CandidateRejected
from traj2env_assets.families.qa.proposal import QaInput
from traj2env_assets.layout import QaCacheLayout

if TYPE_CHECKING:
    from huggingface_hub import HfApi

DEFAULT_ENDPOINT = "https://huggingface.co"
INPUT_NOT_RESOLVABLE = "input_not_resolvable"


class PinnedInput(BaseModel):
    """``<cache root>/qa/pins/<key>.json``: one input at its pinned commit."""

    model_config = ConfigDict(extra="forbid")

    repo_id: str
    path: str
    commit: str
    commit_date: str
    sha256: str
    local_path: Path

    @property
    def file_name(self) -> str:
        return Path(self.path).name


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "").rstrip("/") or DEFAULT_ENDPOINT


def _pin_file(cache_root: Path, endpoint: str, item: QaInput, moment: datetime) -> Path:
    key = hashlib.sha256(f"{endpoint}\0{item.repo_id}\0{item.path}\0{moment.isoformat()}".encode()).hexdigest()
    return QaCacheLayout(cache_root).pin_file(key)


def _recorded(path: Path) -> PinnedInput | None:
    try:
        pinned = PinnedInput.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None
    if not pinned.local_path.is_file() or file_sha256(pinned.local_path) != pinned.sha256:
        return None
    return pinned


def _current_commit(api: HfApi, repo_id: str, moment: datetime) -> tuple[str, datetime]:
    try:
        commits = api.list_repo_commits(repo_id, repo_type="dataset")
    except Exception as exc:  # the client raises HTTP, connection and validation errors alike
        raise CandidateRejected(
            INPUT_NOT_RESOLVABLE, f"{repo_id}: no commit list ({type(exc).__name__}: {exc})"[:500]
        ) from exc
    earlier = [commit for commit in commits if commit.created_at <= moment]
    if not earlier:
        raise CandidateRejected(INPUT_NOT_RESOLVABLE, f"{repo_id}: no commit at or before {moment.isoformat()}")
    newest = max(earlier, key=lambda commit: commit.created_at)
    return newest.commit_id, newest.created_at


def pin_input(item: QaInput, moment: datetime, cache_root: Path) -> PinnedInput:
    """The input at the commit current at ``moment`` (an aware datetime); raises CandidateRejected."""
    endpoint = hub_endpoint()
    record = _pin_file(cache_root, endpoint, item, moment)
    if (pinned := _recorded(record)) is not None:
        return pinned
    # The Hub client is half a second of every CLI start: loaded when an input is pinned.
    from huggingface_hub import HfApi, hf_hub_download

    commit, created = _current_commit(HfApi(endpoint=endpoint), item.repo_id, moment)
    try:
        local = hf_hub_download(
            item.repo_id,
            item.path,
            repo_type="dataset",
            revision=commit,
            cache_dir=QaCacheLayout(cache_root).hub_dir,
            endpoint=endpoint,
        )
    except Exception as exc:  # entry/revision/repository not found, HTTP and connection errors
        raise CandidateRejected(
            INPUT_NOT_RESOLVABLE, f"{item.repo_id}/{item.path} at {commit[:12]}: {type(exc).__name__}: {exc}"[:500]
        ) from exc
    pinned = PinnedInput(
        repo_id=item.repo_id,
        path=item.path,
        commit=commit,
        commit_date=created.isoformat(),
        sha256=file_sha256(Path(local)),
        local_path=Path(local).resolve(),
    )
    atomic_write_json(record, pinned)
    return pinned


def pin_inputs(inputs: list[QaInput], moment: datetime, cache_root: Path) -> list[PinnedInput]:
    return [pin_input(item, moment, cache_root) for item in inputs]

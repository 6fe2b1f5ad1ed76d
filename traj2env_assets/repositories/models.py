"""The ``source.repositories`` option and the records of what a checkout contributed."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

RepositoryStatus = Literal["used", "refused"]


class RepositoryEntry(BaseModel):
    """One local git checkout and the recorded session directories it stands for.

    ``cwds``: the session working directories as recorded (``/Users/alice/proj``); a
    session whose cwd is one of them or lies under one uses this checkout. Left empty,
    the checkout covers sessions whose cwd or session file lies inside it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path
    cwds: list[str] = Field(default_factory=list)

    @field_validator("path", mode="before")
    @classmethod
    def _local_path(cls, value: Any) -> Any:
        # Nothing leaves the machine: a URL is never cloned.
        if isinstance(value, str) and ("://" in value or value.startswith("git@")):
            raise ValueError(
                f"source.repositories path {value!r} is a URL; only local checkouts are read "
                "(make one first: `git clone URL DIR`)"
            )
        return value

    @field_validator("cwds")
    @classmethod
    def _absolute_cwds(cls, value: list[str]) -> list[str]:
        for cwd in value:
            if not cwd.startswith("/") and not (len(cwd) > 2 and cwd[1] == ":"):
                raise ValueError(f"cwd {cwd!r} must be absolute, as the session recorded it")
        return [cwd.rstrip("/") or "/" for cwd in value]


Repositories = Literal["auto"] | list[RepositoryEntry]


class RepositoryRecord(BaseModel):
    """``<workspace>/replay/<key>/repository.json``: the checkout that covered the session."""

    status: RepositoryStatus
    path: str
    """The checkout's top level on this machine."""
    subdirectory: str = ""
    """The session's project inside the checkout ('' = its top level)."""
    branch: str
    commit: str | None = None
    """The commit current at the session's first timestamp on ``branch``."""
    tree: str | None = None
    session_start: str | None = None
    files_from_repository: int = 0
    """Project files the replay took from the commit."""
    files_differing: int = 0
    """Files whose first full read in the log differs from the commit (uncommitted work)."""
    reads_agreeing: int = 0
    """Files whose first full read in the log equals the commit."""
    files_skipped: int = 0
    """Tracked files not taken: binary, symlinks, submodules, over the size limit."""
    reason: str | None = None
    detail: str | None = None

    @property
    def key(self) -> str:
        """What the replay's result depends on (part of the replay stage's cache key)."""
        return f"{self.status}:{self.path}:{self.subdirectory}:{self.commit}:{self.tree}:{self.reason}"


class RepositoryMetadata(BaseModel):
    """``[metadata.repository]`` of a task made on a repository-backed replay."""

    model_config = ConfigDict(extra="forbid")

    path: str
    branch: str
    commit: str
    files_from_repository: int
    files_differing: int

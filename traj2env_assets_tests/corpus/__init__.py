"""Where the real third-party agent logs live: outside the repository, never copied into it.

They sit beside the checkout in ``../shared/fixtures/`` (``real/`` and ``real-dev/``; each
has a SOURCES.md); ``TRAJ2ENV_REAL_CORPUS`` points elsewhere. Users of the project have no
``../shared``: the corpus tests skip and the benchmarks that read it say where they looked.
"""

from __future__ import annotations

import os
from pathlib import Path

REAL_CORPUS_ENV = "TRAJ2ENV_REAL_CORPUS"
REPOSITORY = Path(__file__).resolve().parents[2]


def corpus_root() -> Path:
    """The folder holding ``real/`` and ``real-dev/``."""
    configured = os.environ.get(REAL_CORPUS_ENV)
    return Path(configured) if configured else REPOSITORY.parent / "shared" / "fixtures"


def corpus_folder(name: str) -> Path | None:
    """``real`` or ``real-dev`` when present, else None."""
    folder = corpus_root() / name
    return folder if folder.is_dir() else None


def missing_reason(name: str) -> str:
    return f"real corpus not found at {corpus_root() / name}: users have no ../shared (set {REAL_CORPUS_ENV} to its folder)"

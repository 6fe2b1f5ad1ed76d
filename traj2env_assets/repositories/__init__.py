"""Optional second input: local git checkouts of the projects the sessions worked on.

With ``source.repositories`` the replay starts from the project's tracked files at the
commit current at the session's first timestamp (:mod:`.basis`, :mod:`.git`); what the
log shows always wins. The history itself never enters a task. No dagster here.
"""

from traj2env_assets.repositories.basis import (
    Coverage,
    find_coverage,
    judge_agreement,
    load_files,
    resolve_commit,
    session_start,
)
from traj2env_assets.repositories.models import (
    Repositories,
    RepositoryEntry,
    RepositoryMetadata,
    RepositoryRecord,
)

__all__ = [
    "Coverage",
    "Repositories",
    "RepositoryEntry",
    "RepositoryMetadata",
    "RepositoryRecord",
    "find_coverage",
    "judge_agreement",
    "load_files",
    "resolve_commit",
    "session_start",
]

"""The stages' side of one task per fix: a candidate whose work another claim now wins stops.

Mining decides with the claims it sees; a copy of the same work mined later may be the
earlier recording. The stages that spend something (a model call, an image) and the one
that publishes ask again first (``traj2env_assets.quality.duplicates``).
"""

from __future__ import annotations

from traj2env_assets.layout import Workspace
from traj2env_assets.lifecycle.status import CandidateStatus, Stage, save_status
from traj2env_assets.quality.duplicates import FixClaims


def dropped_as_duplicate(workspace: Workspace, status: CandidateStatus, stage: Stage) -> CandidateStatus | None:
    """The candidate dropped at ``stage`` (and saved) if another claim on its work wins; else None."""
    if status.work_key is None:
        return None
    winner = FixClaims(workspace.dedupe_dir).winner(status.work_key)
    if winner is None or winner.task_id == status.task_id:
        return None
    return save_status(workspace, status.dropped(stage, winner.drop(), duplicate_of=winner.task_id))

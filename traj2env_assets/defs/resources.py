"""Resources shared by every stage's assets."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from traj2env_assets.workspace import Workspace


class WorkspaceResource(dg.ConfigurableResource):
    """The workspace root that every stage writes ``<stage>/<partition key>/...`` under."""

    root: str = "workspace"

    def workspace(self) -> Workspace:
        return Workspace(root=Path(self.root).resolve())

"""Controls the family tests submit through the real trial path."""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.verification.controls import AgentAction, Control


class SubmitFiles(Control):
    """A submission that writes the given files (absolute paths) and nothing else."""

    name = "submit_files"

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(files=self.files)

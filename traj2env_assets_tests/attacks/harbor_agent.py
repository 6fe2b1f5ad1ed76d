"""A Harbor agent that submits one attack of the catalogue, for ``harbor run``.

Harbor (0.25, 0.26) loads a custom agent from an import path (``-a module:Class`` or
``agents[].import_path`` in a job config) and passes ``agents[].kwargs`` to its
constructor. This one takes ``attack`` (a catalogue name) and ``runner`` (pytest,
unittest or node), reads ``/workspace`` from the environment as an agent would, builds the
attack's files and script from it, copies the files in and runs the script as root in
``/workspace``, exactly like a trial-path control::

    agents:
      - import_path: traj2env_assets_tests.attacks.harbor_agent:AttackAgent
        kwargs: {attack: assert_true_keeps_names, runner: pytest}
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

from traj2env_assets_tests.attacks.catalogue import BY_NAME
from traj2env_assets_tests.attacks.model import SAMPLE_PROJECTS, WORKSPACE, Runner

IMPORT_PATH = "traj2env_assets_tests.attacks.harbor_agent:AttackAgent"
_STAGING = "/tmp/t2e-attack-files"


class AttackAgent(BaseAgent):
    def __init__(self, logs_dir: Path, *args: Any, attack: str, runner: str, **kwargs: Any) -> None:
        super().__init__(logs_dir, *args, **kwargs)
        self.attack = BY_NAME[attack]
        self.runner = Runner(runner)
        if self.runner not in self.attack.runners:
            raise ValueError(f"{attack} does not target {runner}")

    @staticmethod
    def name() -> str:
        return "traj2env-attack"

    def version(self) -> str:
        return "1"

    async def setup(self, environment: BaseEnvironment) -> None:
        return

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        with tempfile.TemporaryDirectory(prefix="t2e-attack-") as scratch:
            workspace = Path(scratch, "workspace")
            await environment.download_dir(WORKSPACE, workspace)
            project = SAMPLE_PROJECTS[self.runner].with_workspace(workspace)
            action = self.attack.payloads[self.runner](project)
            staging = Path(scratch, "files")
            for path, content in action.files.items():
                target = staging / path.lstrip("/")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
            if action.files:
                await environment.upload_dir(staging, _STAGING)
                await environment.exec(f"cp -a {_STAGING}/. / && rm -rf {_STAGING}", user="root")
        result = await environment.exec(
            action.script, cwd=WORKSPACE, user="root", env={"DEBIAN_FRONTEND": "noninteractive"}
        )
        (self.logs_dir / "attack.txt").write_text(
            f"{self.attack.name}[{self.runner}] exit {result.return_code}\n{result.stdout or ''}\n{result.stderr or ''}"
        )

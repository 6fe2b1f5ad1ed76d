"""A Harbor agent that submits one red-team attack (``catalogue.ATTACKS``), for ``harbor run``.

Harbor loads it from its import path and passes ``agents[].kwargs``: ``attack`` (a
catalogue name) and ``task_dir`` (the task directory on the host, which the attack reads
as an agent would: its instruction and ``environment/workspace``). It copies the attack's
files into the environment and runs its script as root in ``/workspace``, exactly like the
trial-path control in ``benchmarks/redteam.py``::

    agents:
      - import_path: traj2env_assets_tests.redteam.harbor_agent:RedTeamAgent
        kwargs: {attack: hc_table_static, task_dir: /path/to/task}
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

from traj2env_assets_tests.redteam.catalogue import by_name

IMPORT_PATH = "traj2env_assets_tests.redteam.harbor_agent:RedTeamAgent"
_STAGING = "/tmp/t2e-redteam-files"


class RedTeamAgent(BaseAgent):
    def __init__(self, logs_dir: Path, *args: Any, attack: str, task_dir: str, **kwargs: Any) -> None:
        super().__init__(logs_dir, *args, **kwargs)
        self.attack = by_name(attack)
        self.task_dir = Path(task_dir)

    @staticmethod
    def name() -> str:
        return "traj2env-redteam"

    def version(self) -> str:
        return "1"

    async def setup(self, environment: BaseEnvironment) -> None:
        return

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        files, script = self.attack.make(self.task_dir)
        if files:
            with tempfile.TemporaryDirectory(prefix="t2e-redteam-") as scratch:
                staging = Path(scratch)
                for path, content in files.items():
                    target = staging / path.lstrip("/")
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(content)
                await environment.upload_dir(staging, _STAGING)
            await environment.exec(f"cp -a {_STAGING}/. / && rm -rf {_STAGING}", user="root")
        result = await environment.exec(script, cwd="/workspace", user="root")
        (self.logs_dir / "attack.txt").write_text(
            f"{self.attack.name} exit {result.return_code}\n{result.stdout or ''}\n{result.stderr or ''}"
        )

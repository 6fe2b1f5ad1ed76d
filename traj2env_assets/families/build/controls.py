"""The build family's controls: the stub, and every tamper control played on top of it.

An empty start state gives a tamper control nothing to hide in (no module to append a
forgery to, no function to make return an always-equal object), so in a build task's
matrix each tamper control first writes the stub: an attacker who has the public
surface but none of the behaviour. The stub alone must score 0 too.
"""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.verification.controls import AgentAction, Control, NoopControl

STUB_DIR = "/tmp/traj2env-stub"


class OnStub(Control):
    """``inner`` played after the stub files are written into the project."""

    def __init__(self, inner: Control, stubs: dict[str, str], name: str | None = None) -> None:
        self.name = name or inner.name
        self.expected_reward = inner.expected_reward
        self._inner = inner
        self._stubs = {f"{STUB_DIR}/{path}": text.encode() for path, text in stubs.items()}

    def action(self, task_dir: Path) -> AgentAction:
        inner = self._inner.action(task_dir)
        return AgentAction(
            files={**inner.files, **self._stubs},
            executable_files=inner.executable_files,
            script=f"cp -a {STUB_DIR}/. /workspace/\n{inner.script}",
        )

    def applies_to(self, task_dir: Path) -> bool:
        return self._inner.applies_to(task_dir)


def stub_control(stubs: dict[str, str]) -> Control:
    return OnStub(NoopControl(), stubs, name="stub")

"""An interrupted matrix's sweep (``verification.trial.sweep_run``) outlasts an engine that fails
a removal it races with.

The race (fuse-overlayfs: "failed to remove root filesystem: directory not empty" while the
container's processes exit) cannot be produced on demand, so the engine is faked at the docker
SDK's boundary: a client whose containers answer ``remove`` with the engine's own errors.
"""

from __future__ import annotations

import pytest
import requests
from docker.errors import APIError

from traj2env_assets.verification.trial import RUN_LABEL, sweep_run


def _engine_error(status: int, explanation: str) -> APIError:
    response = requests.Response()
    response.status_code = status
    return APIError(f"engine answered {status}", response=response, explanation=explanation)


class FakeContainer:
    """Named so: a container whose removals fail with the queued errors, then succeed."""

    def __init__(self, name: str, errors: list[APIError], removed: list[str]) -> None:
        self.id = self.name = name
        self._errors, self._removed = errors, removed

    def remove(self, force: bool) -> None:
        assert force
        if self._errors:
            raise self._errors.pop(0)
        self._removed.append(self.name)


class FakeClient:
    """Named so: lists the run's containers that are not removed yet."""

    def __init__(self, containers: list[FakeContainer], removed: list[str]) -> None:
        self.containers = self
        self._all, self._removed = containers, removed

    def list(self, all: bool, sparse: bool, filters: dict[str, str]) -> list[FakeContainer]:
        assert all and filters == {"label": f"{RUN_LABEL}=run-1"}
        return [container for container in self._all if container.name not in self._removed]


RACE = 'driver "fuse-overlayfs" failed to remove root filesystem: directory not empty'


def test_a_removal_the_engine_races_with_is_tried_again_and_the_others_are_not_held_up() -> None:
    removed: list[str] = []
    racing = FakeContainer("agent", [_engine_error(500, RACE), _engine_error(500, RACE)], removed)
    client = FakeClient([racing, FakeContainer("verifier", [], removed)], removed)
    sweep_run(client, "run-1")
    assert removed == ["verifier", "agent"]


def test_an_engine_that_keeps_failing_or_refuses_for_another_reason_raises() -> None:
    removed: list[str] = []
    stuck = FakeContainer("agent", [_engine_error(500, RACE) for _ in range(5)], removed)
    with pytest.raises(APIError, match="500"):
        sweep_run(FakeClient([stuck], removed), "run-1", attempts=3)
    refused = FakeContainer("verifier", [_engine_error(403, "forbidden")], removed)
    with pytest.raises(APIError, match="403"):
        sweep_run(FakeClient([refused], removed), "run-1")

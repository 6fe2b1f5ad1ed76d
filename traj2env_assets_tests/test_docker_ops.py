"""The per-candidate Docker ops: transient engine errors are retried, anything else fails at once.

The stage is a real graph-backed asset from the factory the pipeline uses; its work
function raises the engine's own error types (no Docker call is made).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import dagster as dg
import pytest
import requests
from docker.errors import APIError

from traj2env_assets.config import RunConfigFile, RunSettings
from traj2env_assets.defs.docker import DockerEngineResource, permanent_unless_transient
from traj2env_assets.defs.docker_stages import REFS_IO_MANAGER, DockerStage, Plan, docker_stage_asset
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import FAMILIES_RESOURCE, PipelineResource
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.errors import is_transient_engine_error
from traj2env_assets.families.contract import Family
from traj2env_assets.families.registry import registered_families
from traj2env_assets.lifecycle.status import CandidateRef, CandidateStatus

REF = CandidateRef(family="repair", partition_key="k", task_id="t1")


def _api_error(status: int) -> APIError:
    response = requests.Response()
    response.status_code = status
    return APIError(f"engine answered {status}", response=response)


def test_only_an_unreachable_or_failing_engine_counts_as_transient() -> None:
    assert is_transient_engine_error(_api_error(500))
    assert is_transient_engine_error(requests.exceptions.ConnectionError("refused"))
    assert not is_transient_engine_error(_api_error(404))
    assert not is_transient_engine_error(ValueError("bad plan"))
    permanent = permanent_unless_transient(ValueError("bad plan"))
    assert isinstance(permanent, dg.Failure) and permanent.allow_retries is False


def _run(
    tmp_path: Path, failures: list[Exception], plan_deferred: Plan | None = None
) -> tuple[dg.ExecuteInProcessResult, Counter[str]]:
    attempts: Counter[str] = Counter()

    def work(pipeline: PipelineResource, engine: DockerEngine, family: Family, ref: CandidateRef) -> CandidateStatus:
        attempts[ref.task_id] += 1
        if failures:
            raise failures.pop(0)
        return CandidateStatus(
            family=ref.family,
            partition_key=ref.partition_key,
            task_id=ref.task_id,
            reward_kind="binary",
            reached="images",
        )

    @dg.asset(partitions_def=trajectories, name="before_stage")
    def before_stage() -> None:
        return None

    stage = docker_stage_asset(
        DockerStage(
            stage="images",
            upstream="before_stage",
            pool="test_docker",
            group="test",
            description="test",
            plan=lambda pipeline, docker, families, statuses, settled: [REF],
            work=work,
            work_metadata=lambda s: {},
            plan_deferred=plan_deferred,
        )
    )
    pipeline = PipelineResource.from_settings(RunSettings.resolve(RunConfigFile(), tmp_path))
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        assert trajectories.name is not None
        instance.add_dynamic_partitions(trajectories.name, ["k"])
        result = dg.materialize(
            [before_stage, stage],
            instance=instance,
            partition_key="k",
            raise_on_error=False,
            resources={
                "pipeline": pipeline,
                "docker_engine": DockerEngineResource(pipeline=pipeline),
                FAMILIES_RESOURCE: registered_families(),
                REFS_IO_MANAGER: dg.mem_io_manager,
            },
        )
    return result, attempts


@pytest.mark.slow
def test_a_transient_engine_error_retries_the_candidates_step(tmp_path: Path) -> None:
    result, attempts = _run(tmp_path, [_api_error(503)])
    assert result.success
    assert attempts["t1"] == 2
    retried = [e for e in result.all_events if e.event_type_value == "STEP_UP_FOR_RETRY"]
    assert [e.step_key for e in retried] == ["images.images_candidate[repair__t1]"]


def test_any_other_error_fails_the_step_without_a_retry(tmp_path: Path) -> None:
    result, attempts = _run(tmp_path, [ValueError("the plan is wrong")])
    assert not result.success
    assert attempts["t1"] == 1


def test_a_second_wave_works_on_what_the_first_plan_left_waiting_after_the_first_waves_steps(tmp_path: Path) -> None:
    """The trials stage's shape: the second plan runs once the first wave's step is done, its
    candidates' steps after it; the summary settles with the second plan."""
    later = CandidateRef(family="repair", partition_key="k", task_id="t2")
    settled_seen: list[frozenset[CandidateRef]] = []

    def plan_deferred(*arguments: object) -> list[CandidateRef]:
        settled = arguments[-1]
        assert isinstance(settled, frozenset)
        settled_seen.append(settled)
        return [] if later in settled else [later]

    result, attempts = _run(tmp_path, [], plan_deferred=plan_deferred)
    assert result.success
    assert list(attempts) == ["t1", "t2"] and set(attempts.values()) == {1}
    steps = [e.step_key for e in result.all_events if e.event_type_value == "STEP_SUCCESS"]
    first, plan, second = (
        steps.index(key)
        for key in (
            "images.images_candidate[repair__t1]",
            "images.images_deferred_plan",
            "images.images_deferred_candidate[repair__t2]",
        )
    )
    assert first < plan < second < steps.index("images.images_summary")
    # The second wave's plan knows the first wave's step; the summary's, both waves'.
    assert settled_seen == [frozenset({REF}), frozenset({REF, later})]
    assert not [e for e in result.all_events if "still waiting" in (e.message or "")]


def test_a_stage_without_a_second_wave_has_no_deferred_steps(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, [])
    assert result.success
    assert not [e for e in result.all_events if e.step_key and "deferred" in e.step_key]

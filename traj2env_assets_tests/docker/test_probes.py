"""Calibration's probes on the real engine: a container each, side by side when asked."""

from __future__ import annotations

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.image_build import BuiltImage
from traj2env_assets.families.contract import CalibrationPlan, Probe
from traj2env_assets.stages.calibration.calibration import run_probes

pytestmark = pytest.mark.docker

# Long enough that two probes started together overlap even when a container is slow to start.
_SLEEP_S = 4
_TIMED = f"date +%s.%N; sleep {_SLEEP_S}; date +%s.%N"


def _interval(output: str) -> tuple[float, float]:
    start, end = (float(line) for line in output.split())
    return start, end


def test_probes_run_side_by_side_and_report_in_plan_order(engine: DockerEngine, node_image: BuiltImage) -> None:
    plan = CalibrationPlan(
        probes=[
            Probe(name="first", script=_TIMED),
            Probe(name="second", script=_TIMED),
            Probe(
                name="third",
                script="cat /tmp/probe-input > /tmp/probe-result; exit 3",
                files={"/tmp/probe-input": b"a file of its own"},
                result_file="/tmp/probe-result",
            ),
        ]
    )
    results = run_probes(engine, node_image.tag, plan, parallelism=2)
    assert [result.name for result in results] == ["first", "second", "third"]
    first, second = _interval(results[0].output_tail), _interval(results[1].output_tail)
    assert first[0] < second[1] and second[0] < first[1], (first, second)
    assert (results[2].exit_code, results[2].result) == (3, "a file of its own")


def test_one_at_a_time_probes_never_overlap(engine: DockerEngine, node_image: BuiltImage) -> None:
    plan = CalibrationPlan(probes=[Probe(name="first", script=_TIMED), Probe(name="second", script=_TIMED)])
    first, second = (_interval(result.output_tail) for result in run_probes(engine, node_image.tag, plan))
    assert first[1] <= second[0]

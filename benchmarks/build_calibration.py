"""Time the build family's calibration probe (hidden tests + mutation testing) on a synthetic project.

Generates a Python project of about ``--lines`` lines (modules of small arithmetic and
comparison functions, one pytest test per function), makes its recorded-mode build task,
builds the image and runs the family's one calibration probe in it, networking off, as
the pipeline does. Prints the project size, the tests kept, the mutants run and killed,
the probe's wall time (seconds per candidate) and mutants per second. Target: under 60 s
per candidate for a 500-line project with 100+ mutants on 2 cores.

    .venv/bin/python benchmarks/build_calibration.py [--lines 500] [--cpus 1.0]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.build.candidates import BuildCandidate
from traj2env_assets.families.build.family import CALIBRATION_PROBE, REFERENCE, BuildFamily, mutants_of
from traj2env_assets.families.contract import TaskSource
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.mutation import parse_calibration
from traj2env_assets.stages.calibration.calibration import run_probes

_FUNCTION = '''

def {name}(values, limit={k}):
    """Sum the values above {k}, scaled by {m}, capped at limit * {m}."""
    total = 0
    for value in values:
        if value > {k}:
            total += value * {m}
    if total >= limit * {m}:
        return limit * {m}
    return total - {k} % 2
'''
_TEST = """

def test_{name}():
    assert {name}([{k}, {k1}, {k2}], limit=1000) == {expected}
    assert {name}([{k1}] * 5000, limit=3) == {cap}
"""


def _expected(k: int, m: int, values: list[int], limit: int) -> int:
    total = sum(value * m for value in values if value > k)
    return limit * m if total >= limit * m else total - k % 2


def synthetic_project(lines: int) -> tuple[dict[str, str], dict[str, str]]:
    """Modules of ``_FUNCTION``s (about ``lines`` lines in all) and one test module per module."""
    sources: dict[str, str] = {}
    tests: dict[str, str] = {}
    per_module, module = 5, 0
    while sum(text.count("\n") for text in sources.values()) < lines:
        names = [f"f{module}_{index}" for index in range(per_module)]
        body, test_body = f'"""Synthetic module {module}."""\n', f"from pkg.m{module} import {', '.join(names)}\n"
        for index, name in enumerate(names):
            k, m = module + index + 1, index % 3 + 2
            body += _FUNCTION.format(name=name, k=k, m=m)
            expected = _expected(k, m, [k, k + 1, k + 2], 1000)
            test_body += _TEST.format(name=name, k=k, k1=k + 1, k2=k + 2, expected=expected, cap=3 * m)
        sources[f"pkg/m{module}.py"] = body
        tests[f"tests/test_m{module}.py"] = test_body
        module += 1
    sources["pkg/__init__.py"] = ""
    return sources, tests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--cpus", type=float, default=1.0, help="CPUs of the probe container")
    args = parser.parse_args()

    sources, tests = synthetic_project(args.lines)
    candidate = BuildCandidate(
        task_id="benchmark-build",
        request="Build the pkg package.",
        reference_files={**sources, **tests},
        session_tests=sorted(tests),
    )
    family = BuildFamily()
    spec = family.task_spec(candidate, None, TaskSource(partition_key="benchmark", source_model=None, org="local"))
    engine = DockerEngine(container_memory="1g", trial_cpus=args.cpus)
    with tempfile.TemporaryDirectory(prefix="traj2env-build-bench-") as scratch:
        task = write_task(spec, Path(scratch))
        started = time.monotonic()
        image = engine.build(task.environment_dir)
        build_s = time.monotonic() - started
    plan = family.calibration_plan(candidate, spec, None)
    started = time.monotonic()
    [result] = run_probes(engine, image.tag, plan)
    probe_s = time.monotonic() - started
    mutants = mutants_of(candidate)
    calibration = parse_calibration(result, REFERENCE, mutants)
    if calibration is None or calibration.mutation is None:
        print(f"{CALIBRATION_PROBE} printed no usable results:\n{result.output_tail[-2000:]}")
        return 1
    mutation = calibration.mutation
    ran = len(mutants) - mutation.count("not_run")
    test_runs_s = sum(run.seconds for run in calibration.runs)
    mutation_s = calibration.seconds - test_runs_s
    verdict = family.judge_calibration(candidate, {CALIBRATION_PROBE: result})
    lines = sum(text.count("\n") for text in sources.values())
    print(f"project: {lines} lines in {len(sources)} modules, {len(calibration.test_ids)} tests")
    print(f"image build: {build_s:.1f} s ({'built' if image.built else 'cached'})")
    print(f"tests kept: {len(calibration.kept)}; flaky: {len(calibration.flaky)}")
    print(f"test runs (reference x2, stub, start): {test_runs_s:.1f} s")
    print(f"mutants: {len(mutants)} generated, {ran} run, kill rate {verdict.facts.get('kill_rate')}")
    print(f"mutation: {mutation_s:.1f} s, {ran / mutation_s:.2f} mutants/s" if mutation_s > 0 else "mutation: 0 s")
    print(f"seconds per candidate (probe wall time, container start included): {probe_s:.1f}")
    print(f"verdict: {verdict.drop.reason if verdict.drop else 'kept'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

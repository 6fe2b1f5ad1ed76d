"""Calibration probes that run ``runner.py`` in a task image, and the parsing of what they print."""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from traj2env_assets.docker_engine.probe import Probe, ProbeResult
from traj2env_assets.mutation.imports import importing_test_modules
from traj2env_assets.mutation.mutants import Mutant

PROBE_DIR = "/tmp/traj2env-pytest-probe"
MARKER = "TRAJ2ENV-PYTEST-PROBE "
# The probe container's own deadline covers the runner's budget plus pytest's start-up.
_PROBE_SLACK_S = 60

MutantStatus = Literal["killed", "survived", "timeout", "not_run"]
_STATUS: dict[str, MutantStatus] = {"k": "killed", "s": "survived", "t": "timeout", "n": "not_run"}


def _pytest_args(workdir: str, pytest_config: str | None) -> list[str]:
    # As the task's verifier runs pytest: no cache, no plugin autoload, the project root
    # as rootdir and an empty configuration unless the project's own is named.
    config = f"{workdir}/{pytest_config}" if pytest_config else f"{PROBE_DIR}/pytest.ini"
    return ["-p", "no:cacheprovider", "-q", "-c", config, "--rootdir", workdir]


def _probe(name: str, plan: dict, files: Mapping[str, str], workdir: str, timeout_s: float) -> Probe:
    written = {f"{workdir}/{path}": content.encode() for path, content in files.items()}
    written[f"{PROBE_DIR}/runner.py"] = (resources.files("traj2env_assets.mutation") / "runner.py").read_bytes()
    written[f"{PROBE_DIR}/pytest.ini"] = b"[pytest]\n"
    written[f"{PROBE_DIR}/plan.json"] = json.dumps(plan, sort_keys=True).encode()
    return Probe(
        name=name,
        script=f"python3 {PROBE_DIR}/runner.py {PROBE_DIR}/plan.json 2>&1",
        workdir=workdir,
        timeout_s=timeout_s,
        files=written,
    )


def _hunk(original: str, mutant: Mutant) -> dict:
    """The one run of lines a mutant changes: sent instead of the whole file to keep plans small."""
    old, new = original.splitlines(keepends=True), mutant.source.splitlines(keepends=True)
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    return {"path": mutant.path, "start": start, "removed": end_old - start, "text": "".join(new[start:end_new])}


def _hunks(
    mutants: Sequence[Mutant], files: Mapping[str, str], tests: Mapping[str, str], targets: Sequence[str]
) -> list[dict]:
    """The mutants as the runner applies them, each with the test modules that can reach its
    file (the runner runs only their tests; none listed: every test)."""
    missing = sorted({mutant.path for mutant in mutants} - set(files))
    if missing:
        raise ValueError(f"mutants of files the probe does not write: {missing}")
    modules = sorted({target.split("::", 1)[0] for target in targets} & (files.keys() | tests.keys()))
    reaching = importing_test_modules({**files, **tests}, modules) if modules else None
    return [
        {**_hunk(files[mutant.path], mutant), "test_files": (reaching or {}).get(mutant.path, [])} for mutant in mutants
    ]


def calibration_probe(
    name: str,
    *,
    states: Mapping[str, Mapping[str, str]],
    must_pass: str,
    must_fail: Sequence[str],
    tests: Mapping[str, str],
    targets: Sequence[str],
    mutants: Sequence[Mutant] = (),
    repeat: int = 2,
    workdir: str = "/workspace",
    pytest_config: str | None = None,
    run_timeout_s: float = 120,
    budget_s: float = 600,
) -> Probe:
    """One probe that calibrates hidden tests and runs mutants against the ones it keeps.

    ``states`` are file overlays ({path relative to workdir: text}) on the image's own
    project; ``tests`` are written over every state; pytest runs ``targets`` (test files or
    node ids) ``repeat`` times on ``must_pass`` and once on each ``must_fail`` state. A test is
    kept when it passes every ``must_pass`` run and no ``must_fail`` run; every mutant (of a
    file of the ``must_pass`` state) then runs against the kept tests until ``budget_s`` is
    spent. Read with :func:`parse_calibration`.
    """
    plan = {
        "mode": "calibrate",
        "workdir": workdir,
        "states": {key: dict(value) for key, value in states.items()},
        "must_pass": must_pass,
        "must_fail": list(must_fail),
        "repeat": repeat,
        "tests": dict(tests),
        "targets": list(targets),
        "pytest_args": _pytest_args(workdir, pytest_config),
        "timeout_s": run_timeout_s,
        "budget_s": budget_s,
        "mutants": _hunks(mutants, states[must_pass], tests, targets),
    }
    runs = repeat + len(must_fail)
    return _probe(name, plan, {}, workdir, runs * run_timeout_s + budget_s + _PROBE_SLACK_S)


def mutation_probe(
    name: str,
    mutants: Sequence[Mutant],
    test_ids: Sequence[str],
    files: Mapping[str, str],
    *,
    workdir: str = "/workspace",
    pytest_config: str | None = None,
    budget_s: float = 600,
    baseline_timeout_s: float = 120,
    droppable: Sequence[str] = (),
) -> Probe:
    """Writes ``files`` (the reference and its tests, {path relative to workdir: text}), checks
    that ``test_ids`` pass on them, then runs each mutant against them (stopping at the first
    failure) until ``budget_s`` is spent; read with :func:`parse_mutation_results`.
    Every mutant's path must be one of ``files``. Those of ``droppable`` (a subset of
    ``test_ids``) that fail on the files as they are are left out instead of failing the
    baseline; the results name them."""
    plan = {
        "mode": "mutants",
        "workdir": workdir,
        "test_ids": list(test_ids),
        "pytest_args": _pytest_args(workdir, pytest_config),
        "timeout_s": baseline_timeout_s,
        "budget_s": budget_s,
        "mutants": _hunks(mutants, files, {}, test_ids),
    }
    if droppable:  # absent otherwise: the plan, and so its cache key, stays as it was
        plan["droppable"] = list(droppable)
    return _probe(name, plan, files, workdir, budget_s + baseline_timeout_s + _PROBE_SLACK_S)


def _report(result: ProbeResult) -> dict | None:
    for line in reversed(result.output_tail.splitlines()):
        if line.startswith(MARKER):
            try:
                report = json.loads(zlib.decompress(base64.b64decode(line[len(MARKER) :], validate=True)))
            except (binascii.Error, zlib.error, ValueError):
                return None
            return report if isinstance(report, dict) else None
    return None


class MutationResults(BaseModel):
    model_config = ConfigDict(extra="forbid")

    baseline_passed: bool
    statuses: dict[str, MutantStatus] = Field(default_factory=dict)  # mutant id -> status
    seconds: float = 0.0
    dropped: list[str] = Field(default_factory=list)  # droppable tests that failed the baseline

    def count(self, status: MutantStatus) -> int:
        return sum(1 for value in self.statuses.values() if value == status)

    def survivors(self) -> list[str]:
        return [mutant_id for mutant_id, status in self.statuses.items() if status == "survived"]


def _statuses(letters: object, mutants: Sequence[Mutant]) -> dict[str, MutantStatus] | None:
    if not isinstance(letters, str) or len(letters) != len(mutants) or set(letters) - set(_STATUS):
        return None
    return {mutant.id: _STATUS[letter] for mutant, letter in zip(mutants, letters, strict=True)}


def parse_mutation_results(result: ProbeResult, mutants: Sequence[Mutant]) -> MutationResults | None:
    """What a :func:`mutation_probe` printed, or None when it printed nothing usable."""
    report = _report(result)
    if report is None:
        return None
    seconds = float(report.get("total_s", 0.0))
    if report.get("baseline") != "passed":
        return MutationResults(baseline_passed=False, seconds=seconds)
    statuses = _statuses(report.get("statuses"), mutants)
    dropped = report.get("dropped") or []
    if statuses is None or not isinstance(dropped, list):
        return None
    return MutationResults(baseline_passed=True, statuses=statuses, seconds=seconds, dropped=[str(i) for i in dropped])


class StateRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    state: str
    passed: list[str]
    seconds: float = 0.0


class Calibration(BaseModel):
    """What a :func:`calibration_probe` found: every test id seen, each run's passes, the kept
    tests (passed every ``must_pass`` run, no ``must_fail`` run), flaky ones and the mutants."""

    model_config = ConfigDict(extra="forbid")

    test_ids: list[str]
    runs: list[StateRun]
    kept: list[str]
    flaky: list[str]
    mutation: MutationResults | None
    seconds: float


def parse_calibration(result: ProbeResult, must_pass: str, mutants: Sequence[Mutant]) -> Calibration | None:
    """What a :func:`calibration_probe` printed, or None when it printed nothing usable.
    ``mutation`` is None when no test was kept (no mutant ran against anything)."""
    report = _report(result)
    if report is None:
        return None
    try:
        ids = [str(test_id) for test_id in report["ids"]]
        seconds_by_state = report.get("seconds", {})
        runs = [
            StateRun(
                state=name,
                passed=[test_id for test_id, letter in zip(ids, letters, strict=True) if letter == "p"],
                seconds=float(seconds_by_state.get(name, 0.0)),
            )
            for name, letters in report["runs"]
        ]
    except (KeyError, TypeError, ValueError, ValidationError):
        return None
    base = [set(run.passed) for run in runs if run.state == must_pass]
    others = [set(run.passed) for run in runs if run.state != must_pass]
    if not base:
        return None
    kept = [
        test_id for test_id in ids if all(test_id in run for run in base) and not any(test_id in run for run in others)
    ]
    flaky = [
        test_id for test_id in ids if any(test_id in run for run in base) and not all(test_id in run for run in base)
    ]
    mutation = None
    if kept and mutants:
        statuses = _statuses(report.get("statuses"), mutants)
        if statuses is None:
            return None
        mutation = MutationResults(baseline_passed=True, statuses=statuses, seconds=float(report.get("total_s", 0.0)))
    return Calibration(
        test_ids=ids, runs=runs, kept=kept, flaky=flaky, mutation=mutation, seconds=float(report.get("total_s", 0.0))
    )


def kill_rate(results: MutationResults) -> float | None:
    """Killed (a timeout counts as killed) over mutants run; None when none ran."""
    ran = [status for status in results.statuses.values() if status != "not_run"]
    if not ran:
        return None
    return sum(1 for status in ran if status in ("killed", "timeout")) / len(ran)

"""Calibration of an extend task in its image: the SWE-bench-style split, then mutants.

Each probe runs in a fresh container of the task image (the base project) with the
hidden tests written over it: ``base`` as it is, ``reference_1`` and ``reference_2``
with the reference's changed files too. A small pytest plugin writes one letter per
test id (``P`` passed, ``F`` failed, ``E`` error, ``S`` skipped, ``M`` not run) and the
test files that did not collect, so the output stays short whatever pytest prints.

Judgement, first that holds (exact reasons, see README):

- ``calibration_failed``: a reference probe timed out or left no outcomes, or too few
  mutants ran within the budget;
- ``existing_tests_fail``: the tests do not even load on the base (the base probe left no
  outcomes while the reference's did: a conftest or base module that fails to import),
  with the error;
- ``existing_tests_fail``: a test file the base already had loads neither on the base nor
  on the reference (the error is in the detail);
- ``tests_not_collected_before``: a hidden test file that the base already had does not
  even load on the base (its existing tests could not run there);
- ``tests_fail_on_reference``: a new or existing test did not pass on the reference, in
  either run (broken or flaky);
- ``existing_tests_fail``: an existing test did not pass on the base;
- ``weak_tests``: the strength floor (``strength``): a new test passes on the base
  already, no new test discriminates, the changed code has too few mutants, or the new
  and existing tests together catch too few of them (``traj2env_assets.mutation``; a
  mutant that breaks an existing test counts, since it would make the reward 0).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping

from traj2env_assets.families.contract import (
    CalibrationPlan,
    CalibrationVerdict,
    Drop,
    Fact,
    Probe,
    ProbeResult,
)
from traj2env_assets.families.extend import strength
from traj2env_assets.families.extend.candidates import ExtendCandidate
from traj2env_assets.families.extend.changed_code import changed_code_mutants
from traj2env_assets.harbor.scripts import PRISTINE_DIR
from traj2env_assets.harbor.task_spec import WORKSPACE, TaskSpec
from traj2env_assets.mutation import kill_rate, mutation_probe, parse_mutation_results

BASE_PROBE = "base"
REFERENCE_PROBES = ("reference_1", "reference_2")
MUTANTS_PROBE = "mutants"
PROBE_TIMEOUT_S = 300
MUTATION_BUDGET_S = 300
_HELPER_DIR = "/tmp/traj2env-calibration"
_LETTERS = {kind: re.compile(rf"^T2E-{kind.upper()} ([PFESM]*)$", re.MULTILINE) for kind in ("new", "existing")}
_SUMMARY = re.compile(r"^T2E-SUMMARY (\{.*\})$", re.MULTILINE)

# A pytest plugin (loaded with -p) that writes a short summary: one outcome letter per
# new and per existing test (a failure in any phase sticks), the first tests that did not
# pass, the files that did not collect, and those among them the base already had.
_OUTCOME_PLUGIN = f'''import json
import os

WANTED = json.load(open("{_HELPER_DIR}/ids.json"))
outcomes, collect_errors, errors = {{}}, [], []


def pytest_runtest_logreport(report):
    if outcomes.get(report.nodeid) in ("F", "E"):
        return
    if report.failed:
        outcomes[report.nodeid] = "F" if report.when == "call" else "E"
    elif report.when == "call":
        outcomes[report.nodeid] = "P" if report.passed else "S"
    elif report.skipped:
        outcomes[report.nodeid] = "S"


def pytest_collectreport(report):
    if report.failed:
        collect_errors.append(report.nodeid)
        lines = str(report.longrepr).strip().splitlines()
        errors.append(report.nodeid + ": " + (lines[-1] if lines else "")[:200])


def pytest_sessionfinish(session):
    letters = {{kind: "".join(outcomes.get(i, "M") for i in WANTED[kind]) for kind in ("new", "existing")}}
    not_passed = [i for i in WANTED["new"] + WANTED["existing"] if outcomes.get(i) != "P"]
    before = [p for p in collect_errors if os.path.isfile("{PRISTINE_DIR}/" + p)]
    with open("{_HELPER_DIR}/outcomes.txt", "w") as handle:
        handle.write("T2E-NEW " + letters["new"] + "\\n")
        handle.write("T2E-EXISTING " + letters["existing"] + "\\n")
        handle.write("T2E-SUMMARY " + json.dumps({{"not_passed": not_passed[:10], "collect_errors": collect_errors[:10],
                                                  "errors": errors[:3],
                                                  "not_loaded_before": before[:10]}}) + "\\n")
'''


def probe_ids(spec: TaskSpec) -> dict[str, list[str]]:
    """The tests whose outcomes the probes report, in the order of their letters."""
    return {"new": list(spec.tests.tracked_test_ids), "existing": list(spec.tests.gate_test_ids)}


def pytest_script(spec: TaskSpec, deleted: list[str]) -> str:
    """Run the test files of every wanted id; print a short log tail and the outcomes."""
    files = sorted({test_id.split("::", 1)[0] for ids in probe_ids(spec).values() for test_id in ids})
    config = spec.tests.pytest_config or f"{_HELPER_DIR}/pytest.ini"
    removals = "".join(f"rm -rf -- {shlex.quote(path)}\n" for path in deleted)
    return (
        f"cd {WORKSPACE}\n{removals}"
        f"PYTHONPATH={_HELPER_DIR} PYTHONDONTWRITEBYTECODE=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 "
        f"python3 -m pytest -p t2e_outcomes -p no:cacheprovider -c {shlex.quote(config)} --rootdir {WORKSPACE} "
        f"-q --tb=short --continue-on-collection-errors {' '.join(shlex.quote(f) for f in files)} "
        f"> {_HELPER_DIR}/log.txt 2>&1\n"
        f"echo \"pytest exit code: $?\"\ntail -c 1500 {_HELPER_DIR}/log.txt\necho\n"
        f"cat {_HELPER_DIR}/outcomes.txt\n"
    )


def _helper_files(spec: TaskSpec) -> dict[str, bytes]:
    return {
        f"{_HELPER_DIR}/t2e_outcomes.py": _OUTCOME_PLUGIN.encode(),
        f"{_HELPER_DIR}/ids.json": json.dumps(probe_ids(spec)).encode(),
        f"{_HELPER_DIR}/pytest.ini": b"[pytest]\n",
    }


def _in_workspace(files: Mapping[str, bytes | str]) -> dict[str, bytes]:
    return {f"{WORKSPACE}/{path}": text if isinstance(text, bytes) else text.encode() for path, text in files.items()}


def split_probes(spec: TaskSpec) -> list[Probe]:
    hidden = _in_workspace(spec.tests.test_files)
    helpers = _helper_files(spec)
    probes = [Probe(name=BASE_PROBE, script=pytest_script(spec, []), files=helpers | hidden, timeout_s=PROBE_TIMEOUT_S)]
    reference = helpers | _in_workspace(spec.solution_files) | hidden
    script = pytest_script(spec, spec.solution_deleted)
    probes += [Probe(name=name, script=script, files=reference, timeout_s=PROBE_TIMEOUT_S) for name in REFERENCE_PROBES]
    return probes


def mutants_probe(candidate: ExtendCandidate, spec: TaskSpec) -> Probe | None:
    """Mutants of the changed code against every new and existing test, on the reference."""
    mutants = changed_code_mutants(candidate)
    if strength.too_few_mutants(len(mutants)) is not None:
        return None  # judged weak without running them
    files = {path: text.decode() for path, text in spec.solution_files.items()} | dict(spec.tests.test_files)
    return mutation_probe(
        MUTANTS_PROBE, mutants, [*spec.tests.tracked_test_ids, *spec.tests.gate_test_ids], files,
        workdir=WORKSPACE, pytest_config=spec.tests.pytest_config, budget_s=MUTATION_BUDGET_S,
    )


def calibration_plan(candidate: ExtendCandidate, spec: TaskSpec) -> CalibrationPlan:
    mutants = mutants_probe(candidate, spec)
    return CalibrationPlan(probes=[*split_probes(spec), *([mutants] if mutants else [])])


class _Run:
    """One probe's summary: the outcome letters of the new and existing tests."""

    def __init__(self, result: ProbeResult) -> None:
        found = {kind: pattern.search(result.output_tail) for kind, pattern in _LETTERS.items()}
        summary = _SUMMARY.search(result.output_tail)
        self.usable = not result.timed_out and summary is not None and all(found.values())
        self.letters = {kind: match.group(1) if match else "" for kind, match in found.items()}
        self.summary: dict[str, list[str]] = json.loads(summary.group(1)) if summary else {}

    def passed(self, kind: str) -> int:
        return self.letters[kind].count("P")

    def all_passed(self, kind: str) -> bool:
        return set(self.letters[kind]) <= {"P"}


def _dropped(reason: str, detail: str, facts: dict[str, Fact]) -> CalibrationVerdict:
    return CalibrationVerdict(drop=Drop(reason=reason, detail=detail), facts=facts)


def _judge_mutants(
    candidate: ExtendCandidate, result: ProbeResult | None, new_tests: int, facts: dict[str, Fact]
) -> CalibrationVerdict:
    mutants = changed_code_mutants(candidate)
    facts["mutants"] = len(mutants)
    if (detail := strength.too_few_mutants(len(mutants))) is not None:
        return _dropped("weak_tests", detail, facts)
    mutation = parse_mutation_results(result, mutants) if result is not None else None
    if mutation is None or not mutation.baseline_passed:
        detail = "the mutation probe left no results" if mutation is None else "the tests failed on the reference"
        return _dropped("calibration_failed", detail, facts)
    rate = kill_rate(mutation)
    ran = len(mutants) - mutation.count("not_run")
    facts |= {
        "mutants_killed": mutation.count("killed") + mutation.count("timeout"),
        "mutants_survived": mutation.count("survived"),
        "mutants_not_run": mutation.count("not_run"),
        "mutation_seconds": round(mutation.seconds, 1),
    }
    if rate is None or ran < strength.MIN_MUTANTS_RUN:
        return _dropped(
            "calibration_failed",
            f"{ran} of {len(mutants)} mutants ran within the budget; at least {strength.MIN_MUTANTS_RUN} needed", facts,
        )
    facts["kill_rate"] = round(rate, 3)
    if (detail := strength.weak_kill_rate(new_tests, rate)) is not None:
        by_id = {mutant.id: mutant for mutant in mutants}
        survivors = "; ".join(
            f"{by_id[i].path}:{by_id[i].line} {by_id[i].description}" for i in mutation.survivors()[:5]
        )
        return _dropped("weak_tests", f"{detail}: {survivors}", facts)
    return CalibrationVerdict(facts=facts)


def _not_loading_on_base(results: Mapping[str, ProbeResult], runs: Mapping[str, _Run]) -> CalibrationVerdict | None:
    """The base left no outcomes while both reference runs did: the tests do not load on the
    base at all (a conftest or module it imports fails), so its existing tests cannot pass."""
    if BASE_PROBE not in runs or runs[BASE_PROBE].usable or results[BASE_PROBE].timed_out:
        return None
    if not all(name in runs and runs[name].usable for name in REFERENCE_PROBES):
        return None
    error = results[BASE_PROBE].output_tail.strip()[-600:]
    return _dropped("existing_tests_fail", f"the tests do not load on the base: {error}", {})


def judge(candidate: ExtendCandidate, results: Mapping[str, ProbeResult]) -> CalibrationVerdict:
    names = (BASE_PROBE, *REFERENCE_PROBES)
    runs = {name: _Run(results[name]) for name in names if name in results}
    if (verdict := _not_loading_on_base(results, runs)) is not None:
        return verdict
    unusable = [name for name in names if name not in runs or not runs[name].usable]
    if unusable:
        tails = " | ".join(results[name].output_tail[-300:] for name in unusable if name in results)
        return _dropped("calibration_failed", f"no outcomes from {', '.join(unusable)}: {tails}", {})
    base = runs[BASE_PROBE]
    new, existing = len(base.letters["new"]), len(base.letters["existing"])
    facts: dict[str, Fact] = {
        "new_tests": new, "existing_tests": existing, "base_collect_errors": base.summary.get("collect_errors", []),
    }
    reference_errors = set(runs[REFERENCE_PROBES[0]].summary.get("collect_errors", []))
    broken = [path for path in base.summary.get("not_loaded_before", []) if path in reference_errors]
    if broken:
        # Not the request's doing: these base test files load neither before nor after it
        # (a file the replay never saw, a dependency the project does not declare).
        detail = f"{', '.join(broken)} load neither on the base nor on the reference: {'; '.join(base.summary.get('errors', []))}"
        return _dropped("existing_tests_fail", detail, facts)
    if base.summary.get("not_loaded_before"):
        detail = f"{', '.join(base.summary['not_loaded_before'])} loaded before the request but not with its new tests"
        return _dropped("tests_not_collected_before", detail, facts)
    for name in REFERENCE_PROBES:
        run = runs[name]
        if not (run.all_passed("new") and run.all_passed("existing")):
            return _dropped("tests_fail_on_reference", f"{name}: {', '.join(run.summary.get('not_passed', []))}", facts)
    if not base.all_passed("existing"):
        errors = base.summary.get("collect_errors", [])
        loading = f" (did not load: {', '.join(errors)})" if errors else ""
        return _dropped("existing_tests_fail", ", ".join(base.summary.get("not_passed", [])) + loading, facts)
    facts["discriminating_tests"] = new - base.passed("new")
    if (detail := strength.not_discriminating(new, base.passed("new"))) is not None:
        return _dropped("weak_tests", detail, facts)
    return _judge_mutants(candidate, results.get(MUTANTS_PROBE), new, facts)

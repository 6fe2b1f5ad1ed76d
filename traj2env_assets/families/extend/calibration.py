"""Calibration of an extend task in its image: the SWE-bench-style split, then mutants.

Each probe runs in a fresh container of the task image (the base project) with the
hidden tests written over it: ``base`` as it is, ``reference_1`` and ``reference_2``
with the reference's changed files too. A small pytest plugin writes one letter per
test id (``P`` passed, ``F`` failed, ``E`` error, ``S`` skipped, ``M`` not run) and the
test files that did not collect, so the output stays short whatever pytest prints.

Judgement, first that holds (exact reasons, see docs/family-extend.md):

- ``calibration_failed``: a reference probe timed out or left no outcomes, or too few
  mutants ran within the budget;
- ``existing_tests_fail``: the tests do not even load on the base (the base probe left no
  outcomes while the reference's did: a conftest or base module that fails to import),
  with the error;
- ``tests_not_collected_before``: a hidden test file that the base already had does not
  even load on the base, though it does on the reference (its existing tests could not
  run there);
- ``tests_fail_on_reference``: a new test, or an existing one not left out, did not pass
  on the reference, in either run (broken or flaky);
- ``existing_tests_fail``: an existing test not left out did not pass on the base;
- ``weak_tests``: the strength floor (``strength``): a new test passes on the base
  already, no new test discriminates, the changed code has too few mutants, or the new
  and existing tests together catch too few of them (``traj2env_assets.mutation``; a
  mutant that breaks an existing test counts, since it would make the reward 0).

An existing test that passes in no run (base, both references; a test file loading in
none of them included) fails for reasons that are not the request's doing: a file the
replay never saw, a system tool or the network the image lacks. It is left out of the
regression set (``LEFT_OUT_FACT``; the task's ``gate_test_ids`` and ``task.toml`` say which)
instead of dropping the candidate; the new tests must still clear the whole floor.
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
# The existing tests a passed calibration leaves out of the regression set (family.calibrated_spec).
LEFT_OUT_FACT = "existing_tests_left_out"
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
    tests = spec.test_verifier()
    return {"new": list(tests.tracked_test_ids), "existing": list(tests.gate_test_ids)}


def pytest_script(spec: TaskSpec, deleted: list[str]) -> str:
    """Run the test files of every wanted id; print a short log tail and the outcomes."""
    files = sorted({test_id.split("::", 1)[0] for ids in probe_ids(spec).values() for test_id in ids})
    config = spec.test_verifier().pytest_config or f"{_HELPER_DIR}/pytest.ini"
    removals = "".join(f"rm -rf -- {shlex.quote(path)}\n" for path in deleted)
    return (
        f"cd {WORKSPACE}\n{removals}"
        f"PYTHONPATH={_HELPER_DIR} PYTHONDONTWRITEBYTECODE=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 "
        f"python3 -m pytest -p t2e_outcomes -p no:cacheprovider -c {shlex.quote(config)} --rootdir {WORKSPACE} "
        f"-q --tb=short --continue-on-collection-errors {' '.join(shlex.quote(f) for f in files)} "
        f"> {_HELPER_DIR}/log.txt 2>&1\n"
        f'echo "pytest exit code: $?"\ntail -c 1500 {_HELPER_DIR}/log.txt\necho\n'
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
    hidden = _in_workspace(spec.test_verifier().test_files)
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
    tests = spec.test_verifier()
    files = {path: text.decode() for path, text in spec.solution_files.items()} | dict(tests.test_files)
    return mutation_probe(
        MUTANTS_PROBE,
        mutants,
        [*tests.tracked_test_ids, *tests.gate_test_ids],
        files,
        workdir=WORKSPACE,
        pytest_config=tests.pytest_config,
        budget_s=MUTATION_BUDGET_S,
        droppable=tests.gate_test_ids,  # the judge decides whether a failing one is left out
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
    candidate: ExtendCandidate, result: ProbeResult | None, new_tests: int, facts: dict[str, Fact], left_out: list[str]
) -> CalibrationVerdict:
    mutants = changed_code_mutants(candidate)
    facts["mutants"] = len(mutants)
    if (detail := strength.too_few_mutants(len(mutants))) is not None:
        return _dropped("weak_tests", detail, facts)
    mutation = parse_mutation_results(result, mutants) if result is not None else None
    if mutation is None or not mutation.baseline_passed:
        detail = "the mutation probe left no results" if mutation is None else "the tests failed on the reference"
        return _dropped("calibration_failed", detail, facts)
    if flaky := sorted(set(mutation.dropped) - set(left_out)):
        return _dropped(
            "tests_fail_on_reference", f"{MUTANTS_PROBE}: {', '.join(flaky)} (passed in the split runs)", facts
        )
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
            f"{ran} of {len(mutants)} mutants ran within the budget; at least {strength.MIN_MUTANTS_RUN} needed",
            facts,
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


def _failing_everywhere(candidate: ExtendCandidate, runs: Mapping[str, _Run]) -> list[str]:
    """The existing tests that passed in no run, on the base nor on either reference: what
    breaks them (a file the replay never saw, a system tool or the network the image lacks)
    is not the request's doing, so they leave the regression set instead of sinking the task."""
    ids = candidate.recorded_existing_tests  # the gate tests, in the order of the letters
    letters = [runs[name].letters["existing"] for name in (BASE_PROBE, *REFERENCE_PROBES)]
    if any(len(row) != len(ids) for row in letters):
        return []
    return [test_id for index, test_id in enumerate(ids) if all(row[index] != "P" for row in letters)]


def _left_out_note(left_out: list[str], base: _Run) -> str:
    files = {test_id.split("::", 1)[0] for test_id in left_out}
    errors = "; ".join(error for error in base.summary.get("errors", []) if error.split(": ", 1)[0] in files)
    return (
        f"{len(left_out)} existing tests fail before and after the request in the image, so they are not "
        f"its doing and are left out of the regression set: {', '.join(left_out)}" + (f" ({errors})" if errors else "")
    )


def _existing_passed(candidate: ExtendCandidate, run: _Run, left_out: list[str]) -> bool:
    """Every existing test passed in ``run``, but those left out."""
    letters = run.letters["existing"]
    if len(letters) != len(candidate.recorded_existing_tests):
        return run.all_passed("existing")
    return all(
        letter == "P"
        for test_id, letter in zip(candidate.recorded_existing_tests, letters, strict=True)
        if test_id not in left_out
    )


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
        "new_tests": new,
        "existing_tests": existing,
        "base_collect_errors": base.summary.get("collect_errors", []),
    }
    left_out = _failing_everywhere(candidate, runs)
    if left_out:
        facts |= {LEFT_OUT_FACT: left_out, "existing_tests_left_out_note": _left_out_note(left_out, base)}
    reference_errors = set(runs[REFERENCE_PROBES[0]].summary.get("collect_errors", []))
    before = [path for path in base.summary.get("not_loaded_before", []) if path not in reference_errors]
    if before:
        detail = f"{', '.join(before)} loaded before the request but not with its new tests"
        return _dropped("tests_not_collected_before", detail, facts)
    for name in REFERENCE_PROBES:
        run = runs[name]
        if not (run.all_passed("new") and _existing_passed(candidate, run, left_out)):
            not_passed = [test_id for test_id in run.summary.get("not_passed", []) if test_id not in left_out]
            loading = (
                f" (did not load: {'; '.join(run.summary.get('errors', []))})" if run.summary.get("errors") else ""
            )
            return _dropped("tests_fail_on_reference", f"{name}: {', '.join(not_passed)}{loading}", facts)
    if not _existing_passed(candidate, base, left_out):
        errors = base.summary.get("collect_errors", [])
        loading = f" (did not load: {', '.join(errors)})" if errors else ""
        not_passed = [test_id for test_id in base.summary.get("not_passed", []) if test_id not in left_out]
        return _dropped("existing_tests_fail", ", ".join(not_passed) + loading, facts)
    facts["regression_tests"] = existing - len(left_out)
    facts["discriminating_tests"] = new - base.passed("new")
    if (weak := strength.not_discriminating(new, base.passed("new"))) is not None:
        return _dropped("weak_tests", weak, facts)
    return _judge_mutants(candidate, results.get(MUTANTS_PROBE), new, facts, left_out)

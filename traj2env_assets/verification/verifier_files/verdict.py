"""Turn the recorded test outcomes into the reward, as root, after the test run.

Usage: ``verdict.py RESULTS_JSONL KEY_HEX TRACKED_IDS_FILE SENTINELS_FILE MODE TAMPER_JSON OUT_DIR GATE_IDS_FILE
[GATE_CASES_JSON GATE_EXPECTED_JSON GATE_ANSWERS_JSONL]``.
Writes OUT_DIR/reward.txt and OUT_DIR/verdict.json.

With the behaviour gate's files (``traj2env_assets.gate``), a test the gate covers counts
as passed only when it passed in the test run *and* the gate worker answered each of its
cases (its recorded calls and their generalisations) as the reference did: what the test
process reports can only lower the reward. The answers come from a process that ran the
solution code as another user; they are compared here, as data, by ``gate_worker.py``'s
``answers_match`` (loaded from this file's folder).

Node's verdict.mjs applies the same rules in the same order; the first that holds decides:

1. ``tamper_check_failed``: the static check left no report (timed out, crashed);
   ``tamper_detected``: it found test-framework tampering in the submission;
2. ``results_forged``: a record on the results channel is not signed with this run's key;
3. ``run_incomplete``: the runner never sent its ``end`` record (killed, ``os._exit``...);
4. ``harness_tampered``: the runner saw the test machinery changed during the run;
5. ``sentinel_contradiction``: a sentinel test (names and bodies drawn at random for this
   run, placed among the project's tests) did not come out as written;
6. MODE ``check``: 1 only when every tracked test passed and no other test of the run
   failed (a test file that failed to collect counts as a failed test); ``fraction``: the
   share of tracked tests that passed; ``split``: 0 when any gate test (one that passed
   before the change) did not pass, else the share of tracked (new) tests that passed;
   ``all_pass``: 1 only when every tracked test passed.

A tracked id without ``::`` is a test file (one that failed to import in the recorded
run): it passes when it collected without error, at least one test was collected from
it and every one of them passed (the run's sentinels in it aside). Sentinels in a file
that failed to collect never ran: when it is a tracked or gate file, it is failed
already, so they are no contradiction.
"""

import hashlib
import hmac
import importlib.util
import json
import sys
from pathlib import Path

ANSWERS_LIMIT_BYTES = 32 * 1024 * 1024


def signed_records(path: Path, key: bytes) -> tuple[list[dict], int]:
    """The records whose signature and sequence hold, and how many lines did not."""
    records: list[dict] = []
    forged = 0
    if not path.is_file():
        return records, forged
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            envelope = json.loads(line)
            body, mac = envelope["body"], envelope["mac"]
            expected = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
            record = json.loads(body) if hmac.compare_digest(expected, mac) else None
        except (ValueError, KeyError, TypeError, AttributeError):
            record = None
        if record is None or record.get("seq") != len(records) + 1:
            forged += 1
            continue
        records.append(record)
    return records, forged


def outcomes(records: list[dict]) -> dict[str, str]:
    """Each test's final outcome: a failure in any phase sticks; the call phase decides otherwise."""
    final: dict[str, str] = {}
    for record in records:
        if record.get("kind") != "report":
            continue
        test_id, phase, outcome = record["id"], record["when"], record["outcome"]
        if outcome == "failed":
            final[test_id] = "failed"
        elif phase == "call" and final.get(test_id) != "failed":
            final[test_id] = outcome
        elif outcome == "skipped" and test_id not in final:
            final[test_id] = "skipped"
    return final


def collect_failures(records: list[dict]) -> dict[str, str]:
    """Test files whose collection failed (or was skipped), by node id."""
    return {r["id"]: r["outcome"] for r in records if r.get("kind") == "collect"}


def file_outcome(path: str, results: dict[str, str], collected: dict[str, str], sentinels: set[str]) -> str:
    """A tracked test file's outcome: collected without error, every test of it passed."""
    if path in collected:
        return "failed" if collected[path] == "failed" else "not_collected"
    tests = [o for test_id, o in results.items() if test_id.startswith(path + "::") and test_id not in sentinels]
    if not tests:
        return "missing"
    return "passed" if all(outcome == "passed" for outcome in tests) else "failed"


def read_lines(path: str) -> list[str]:
    return [line for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def tamper_findings(path: str) -> list[dict] | None:
    """The static check's findings; None when it left no readable report."""
    try:
        return list(json.loads(Path(path).read_text(encoding="utf-8"))["findings"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _answers_match():
    spec = importlib.util.spec_from_file_location("gate_worker", Path(__file__).with_name("gate_worker.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.answers_match


def gate_failures(cases_path: str, expected_path: str, answers_path: str) -> dict:
    """Each gate case's verdict: the tests with a case answered unlike the reference."""
    answers_match = _answers_match()
    steps = {case["id"]: case["steps"] for case in json.loads(Path(cases_path).read_text(encoding="utf-8"))["cases"]}
    expected = json.loads(Path(expected_path).read_text(encoding="utf-8"))["cases"]
    given: dict[str, object] = {}
    repeated: set[str] = set()
    path = Path(answers_path)
    raw = path.read_bytes()[:ANSWERS_LIMIT_BYTES] if path.is_file() else b""
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            answer = json.loads(line)
            case_id, case_steps = answer["id"], answer.get("steps")
        except (ValueError, KeyError, TypeError):
            continue
        if not isinstance(case_id, str):
            continue
        if case_id in given:
            repeated.add(case_id)
        given[case_id] = case_steps
    failed: dict[str, str] = {}
    for case_id, case in expected.items():
        if case_id in repeated:
            failed[case_id] = "answered more than once"
            continue
        try:
            matched, detail = answers_match(case["answers"], given.get(case_id), steps[case_id])
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError):
            matched, detail = False, "the answer is malformed"
        if not matched:
            failed[case_id] = detail
    return {
        "cases": len(expected),
        "failed_cases": {case_id: failed[case_id] for case_id in sorted(failed)[:20]},
        "failed_count": len(failed),
        "failed_tests": sorted({expected[case_id]["test"] for case_id in failed}),
    }


def main() -> int:
    results_path, key_hex, tracked_path, sentinels_path, mode, tamper_path, out_dir, gate_path, *gate_files = sys.argv[
        1:
    ]
    records, forged_records = signed_records(Path(results_path), key_hex.encode())
    results = outcomes(records)
    gate = gate_failures(*gate_files) if gate_files else None
    in_process = dict(results)
    for test_id in gate["failed_tests"] if gate else ():
        if results.get(test_id) == "passed":
            results[test_id] = "failed_behaviour_gate"
    collected = collect_failures(records)
    tracked = read_lines(tracked_path)
    expected_sentinels = dict(line.split("\t", 1) for line in read_lines(sentinels_path))
    tracked_outcomes = {
        test_id: results.get(test_id, "missing")
        if "::" in test_id
        else file_outcome(test_id, results, collected, set(expected_sentinels))
        for test_id in tracked
    }
    # A file that failed to collect is a failed unit of the run.
    for path, outcome in collected.items():
        if outcome == "failed":
            results.setdefault(path, "failed")
    gate_ids = read_lines(gate_path)
    gate_outcomes = {test_id: results.get(test_id, "missing") for test_id in gate_ids}
    gate_not_passed = sorted(test_id for test_id, outcome in gate_outcomes.items() if outcome != "passed")
    # Sentinels never run in a tracked or gate file that failed to collect; that file's own
    # outcome already costs the reward.
    scored_files = {test_id.split("::", 1)[0] for test_id in [*tracked, *gate_ids]}
    unrun = {path for path, outcome in collected.items() if outcome == "failed" and path in scored_files}
    sentinels = {
        test_id: "not_collected" if test_id.split("::", 1)[0] in unrun else results.get(test_id, "missing")
        for test_id in expected_sentinels
    }
    expected_sentinels = {
        test_id: "not_collected" if test_id.split("::", 1)[0] in unrun else outcome
        for test_id, outcome in expected_sentinels.items()
    }
    ends = [record for record in records if record.get("kind") == "end"]
    problems = sorted({p for record in records if record.get("kind") == "integrity" for p in record["problems"]})
    findings = tamper_findings(tamper_path)
    passed = sum(outcome == "passed" for outcome in tracked_outcomes.values())
    others_failed = sorted(
        test_id
        for test_id, outcome in results.items()
        if outcome in ("failed", "failed_behaviour_gate") and test_id not in expected_sentinels
    )
    # The gate's cases cover the run's tests; one a test the run never reported is a failure too.
    gate_failed = bool(gate and gate["failed_count"])
    if findings is None:
        reward, reason = 0.0, "tamper_check_failed"
    elif findings:
        reward, reason = 0.0, "tamper_detected"
    elif forged_records:
        reward, reason = 0.0, "results_forged"
    elif not ends:
        reward, reason = 0.0, "run_incomplete"
    elif problems:
        reward, reason = 0.0, "harness_tampered"
    elif sentinels != expected_sentinels:
        reward, reason = 0.0, "sentinel_contradiction"
    elif mode == "check" and gate_failed and all(in_process.get(t) == "passed" for t in tracked):
        reward, reason = 0.0, "behaviour_gate_failed"
    elif mode == "check" and (passed < len(tracked) or others_failed or gate_failed):
        reward, reason = 0.0, "check_failed"
    elif mode == "split" and gate_not_passed:
        reward, reason = 0.0, "existing_tests_not_passed"
    elif mode in ("fraction", "split"):
        reward = passed / len(tracked)
        lowered = any(outcome == "failed_behaviour_gate" for outcome in tracked_outcomes.values())
        reason = "behaviour_gate_failed" if lowered else "fraction_passed"
    elif passed == len(tracked):
        reward, reason = 1.0, "all_tracked_passed"
    else:
        reward, reason = 0.0, "tracked_not_passed"
    verdict = {
        "reward": reward,
        "reason": reason,
        "tracked": tracked_outcomes,
        "gate": gate_outcomes,
        "sentinels": sentinels,
        "failed": others_failed,
        "tamper_findings": findings,
        "integrity_problems": problems,
        "forged_records": forged_records,
        "results_recorded": len(results),
        "behaviour_gate": gate,
    }
    out = Path(out_dir)
    (out / "verdict.json").write_text(json.dumps(verdict, indent=2) + "\n")
    (out / "reward.txt").write_text(f"{reward:g}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Turn recorded test outcomes into the reward, as root, after the test run.

Usage: ``verdict.py RESULTS_JSONL TRACKED_IDS_FILE SENTINEL MODE OUT_DIR``. Writes
OUT_DIR/reward.txt and OUT_DIR/verdict.json. Rules: every tracked id must be present;
the sentinel pair (one test that must pass, one that must fail, with names drawn at
random for this run) must come out as written, otherwise the results were forged and
the reward is 0. MODE ``all_pass`` gives 1 only when every tracked test passed;
``fraction`` gives the share that passed; ``check`` gives 1 only when every tracked test
passed and no other test of the run failed (the recorded check passes as a whole).
"""

import json
import sys
from pathlib import Path


def outcomes(path: Path) -> dict[str, str]:
    final: dict[str, str] = {}
    if not path.is_file():
        return final
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
            test_id, phase, outcome = record["id"], record["when"], record["outcome"]
        except (ValueError, KeyError, TypeError):
            continue
        if outcome == "failed":
            final[test_id] = "failed"
        elif phase == "call" and final.get(test_id) != "failed":
            final[test_id] = outcome
        elif outcome == "skipped" and test_id not in final:
            final[test_id] = "skipped"
    return final


def sentinel_outcome(results: dict[str, str], name: str) -> str:
    matches = [outcome for test_id, outcome in results.items() if test_id.endswith("::" + name)]
    return matches[0] if len(matches) == 1 else "missing"


def main() -> int:
    results_path, tracked_path, sentinel, mode, out_dir = sys.argv[1:]
    results = outcomes(Path(results_path))
    tracked = [line for line in Path(tracked_path).read_text().splitlines() if line.strip()]
    tracked_outcomes = {test_id: results.get(test_id, "missing") for test_id in tracked}
    sentinels = {
        "must_pass": sentinel_outcome(results, f"test_{sentinel}_pass"),
        "must_fail": sentinel_outcome(results, f"test_{sentinel}_fail"),
    }
    forged = sentinels != {"must_pass": "passed", "must_fail": "failed"}
    passed = sum(outcome == "passed" for outcome in tracked_outcomes.values())
    sentinel_ids = {f"test_{sentinel}_pass", f"test_{sentinel}_fail"}
    others_failed = sorted(
        test_id for test_id, outcome in results.items()
        if outcome == "failed" and test_id.rsplit("::", 1)[-1] not in sentinel_ids
    )
    if forged:
        reward, reason = 0.0, "sentinel_contradiction"
    elif mode == "check" and (passed < len(tracked) or others_failed):
        reward, reason = 0.0, "check_failed"
    elif mode == "fraction":
        reward, reason = passed / len(tracked), "fraction_passed"
    elif passed == len(tracked):
        reward, reason = 1.0, "all_tracked_passed"
    else:
        reward, reason = 0.0, "tracked_not_passed"
    verdict = {
        "reward": reward,
        "reason": reason,
        "tracked": tracked_outcomes,
        "sentinels": sentinels,
        "failed": others_failed,
        "results_recorded": len(results),
    }
    out = Path(out_dir)
    (out / "verdict.json").write_text(json.dumps(verdict, indent=2) + "\n")
    (out / "reward.txt").write_text(f"{reward:g}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A tracked test file (one that failed to import in the recorded run) in the root-side
verdict (verifier_files/verdict.py): it passes only when it collected without error, at
least one test came from it and every one passed; sentinels in it are excused only when
it failed to collect (which fails it)."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

KEY = "cd" * 32
FILE = "tests/test_calc.py"
SENTINEL_PASS = f"{FILE}::test_merge_range_1"
SENTINEL_FAIL = f"{FILE}::test_order_cache_2"
MODULE_PASS = "tests/test_window_value_3.py::test_parse_limit_4"
MODULE_FAIL = "tests/test_window_value_3.py::test_split_index_5"
SENTINELS = {SENTINEL_PASS: "passed", SENTINEL_FAIL: "failed", MODULE_PASS: "passed", MODULE_FAIL: "failed"}


def _verdict(tmp_path: Path, records: list[dict], tracked: list[str], mode: str = "check") -> dict:
    tmp_path.mkdir(parents=True, exist_ok=True)
    verdict_py = tmp_path / "verdict.py"
    verdict_py.write_bytes(
        (resources.files("traj2env_assets.verification") / "verifier_files" / "verdict.py").read_bytes()
    )
    lines = []
    for seq, record in enumerate([*records, {"kind": "integrity", "problems": []}, {"kind": "end", "exit_code": 1}], 1):
        body = json.dumps({**record, "seq": seq}, sort_keys=True)
        lines.append(
            json.dumps({"body": body, "mac": hmac.new(KEY.encode(), body.encode(), hashlib.sha256).hexdigest()})
        )
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "tracked.txt").write_text("\n".join(tracked) + "\n")
    (tmp_path / "sentinels.txt").write_text("".join(f"{i}\t{o}\n" for i, o in SENTINELS.items()))
    (tmp_path / "gate_ids.txt").write_text("")
    (tmp_path / "tamper.json").write_text('{"findings": []}')
    subprocess.run(
        [
            sys.executable,
            "-I",
            str(verdict_py),
            str(tmp_path / "results.jsonl"),
            KEY,
            str(tmp_path / "tracked.txt"),
            str(tmp_path / "sentinels.txt"),
            mode,
            str(tmp_path / "tamper.json"),
            str(tmp_path),
            str(tmp_path / "gate_ids.txt"),
        ],
        check=True,
        timeout=60,
    )
    return json.loads((tmp_path / "verdict.json").read_text())


def _reports(outcomes: dict[str, str]) -> list[dict]:
    return [{"kind": "report", "id": test_id, "when": "call", "outcome": o} for test_id, o in outcomes.items()]


SENTINEL_REPORTS = _reports(SENTINELS)
MODULE_SENTINELS = _reports({MODULE_PASS: "passed", MODULE_FAIL: "failed"})


@pytest.mark.parametrize(
    ("records", "reward", "outcome", "reason"),
    [
        # Collects, every test passes: the file passes.
        (
            _reports({f"{FILE}::test_add": "passed", f"{FILE}::test_scale": "passed"}) + SENTINEL_REPORTS,
            1.0,
            "passed",
            "all_tracked_passed",
        ),
        # Collects, one test fails.
        (
            _reports({f"{FILE}::test_add": "passed", f"{FILE}::test_scale": "failed"}) + SENTINEL_REPORTS,
            0.0,
            "failed",
            "check_failed",
        ),
        # Still fails to import: failed, and its sentinels (never run) are no contradiction.
        ([{"kind": "collect", "id": FILE, "outcome": "failed"}, *MODULE_SENTINELS], 0.0, "failed", "check_failed"),
        # Skipped whole at import (a module-level skip in the code under test): not a pass.
        (
            [{"kind": "collect", "id": FILE, "outcome": "skipped"}, *MODULE_SENTINELS],
            0.0,
            "not_collected",
            "sentinel_contradiction",
        ),
        # Collects, but only the sentinels came from it: no test of its own passed.
        (SENTINEL_REPORTS, 0.0, "missing", "check_failed"),
        # A test of it skipped is not a pass.
        (
            _reports({f"{FILE}::test_add": "passed", f"{FILE}::test_scale": "skipped"}) + SENTINEL_REPORTS,
            0.0,
            "failed",
            "check_failed",
        ),
    ],
    ids=["all-passed", "one-failed", "still-fails-to-import", "skipped-at-import", "no-tests", "one-skipped"],
)
def test_a_tracked_test_file(tmp_path: Path, records: list[dict], reward: float, outcome: str, reason: str) -> None:
    verdict = _verdict(tmp_path, records, [FILE])
    assert (verdict["reward"], verdict["tracked"], verdict["reason"]) == (reward, {FILE: outcome}, reason)


def test_a_file_that_fails_to_collect_fails_the_check_and_cannot_hide_sentinels(tmp_path: Path) -> None:
    # A tracked test passes, but another file of the check fails to import: the check fails.
    other = "tests/test_other.py"
    records = [
        *_reports({f"{FILE}::test_add": "passed"}),
        *SENTINEL_REPORTS,
        {"kind": "collect", "id": other, "outcome": "failed"},
    ]
    verdict = _verdict(tmp_path / "other", records, [f"{FILE}::test_add"])
    assert (verdict["reward"], verdict["reason"], verdict["failed"]) == (0.0, "check_failed", [other])
    # The sentinel module is no tracked file: its failing to collect is no excuse for its sentinels.
    module = MODULE_PASS.split("::", 1)[0]
    records = [
        *_reports({f"{FILE}::test_add": "passed"}),
        *_reports({SENTINEL_PASS: "passed", SENTINEL_FAIL: "failed"}),
        {"kind": "collect", "id": module, "outcome": "failed"},
    ]
    verdict = _verdict(tmp_path / "module", records, [f"{FILE}::test_add"], mode="all_pass")
    assert (verdict["reward"], verdict["reason"]) == (0.0, "sentinel_contradiction")

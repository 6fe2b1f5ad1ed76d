"""The reward of a lint or type check (ruff, mypy, tsc, eslint), as root, after both runs.

Usage: ``lint_verdict.py CONTROL_EXIT CHECK_EXIT TAMPER_JSON OUT_DIR [FINDINGS_EXITS]``
(the tool's exit codes for "findings", comma-separated; 1 by default, ``1,2`` for tsc).
Writes OUT_DIR/reward.txt and OUT_DIR/verdict.json. The first rule that holds decides:

1. ``tamper_check_failed``: the static check left no report;
   ``tamper_detected``: the submission silences the check (suppression comments, new
   stubs) or deletes the code it reported on;
2. ``control_not_failing``: on the pristine project the check did not fail with a
   findings exit code: the tool cannot reproduce the recorded failure, so a pass on the
   submission would prove nothing;
3. ``check_errored``: on the submission the tool neither passed nor reported findings
   (another exit code: a crash, a usage error, a timeout);
4. ``check_failed`` (a findings exit code) or ``check_passed`` (0, reward 1).

There are no sentinel tests and no assertion controls: the check runs no project code.
"""

import json
import sys
from pathlib import Path


def tamper_findings(path: str) -> list[dict] | None:
    try:
        return list(json.loads(Path(path).read_text(encoding="utf-8"))["findings"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main() -> int:
    control_exit, check_exit, tamper_path, out_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    findings_exits = {int(code) for code in (sys.argv[5] if len(sys.argv) > 5 else "1").split(",")}
    findings = tamper_findings(tamper_path)
    if findings is None:
        reward, reason = 0, "tamper_check_failed"
    elif findings:
        reward, reason = 0, "tamper_detected"
    elif control_exit not in findings_exits:
        reward, reason = 0, "control_not_failing"
    elif check_exit != 0 and check_exit not in findings_exits:
        reward, reason = 0, "check_errored"
    elif check_exit in findings_exits:
        reward, reason = 0, "check_failed"
    else:
        reward, reason = 1, "check_passed"
    verdict = {
        "reward": reward,
        "reason": reason,
        "check_exit": check_exit,
        "control_exit": control_exit,
        "tamper_findings": findings,
    }
    out = Path(out_dir)
    (out / "verdict.json").write_text(json.dumps(verdict, indent=2) + "\n", encoding="utf-8")
    (out / "reward.txt").write_text(f"{reward}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

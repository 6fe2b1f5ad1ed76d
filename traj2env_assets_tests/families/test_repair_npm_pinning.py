"""npm dependencies are pinned to the trajectory's time: a Node repair candidate mined from a
Claude Code session of our own making installs with ``npm ci --before=<time>``, the UTC time
(RFC 3339, as uv pins Python packages) of the failing check the task comes from; with no timestamp there is no
``--before``. Checked where the command line is built (``environment_plan``) and in the
Dockerfile the task writes (offline: nothing here reaches the npm registry)."""

from __future__ import annotations

import json
from pathlib import Path

from traj2env_assets.families.repair.candidates import (
    RepairCandidate,
    mine_repair_candidates,
)
from traj2env_assets.families.repair.task import environment_plan, repair_task_spec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets_tests.families.conftest import record_for
from traj2env_assets_tests.formats.logs import (
    claude_line,
    tool_result,
    tool_use,
    write_jsonl,
)

ROOT = "/home/dev/pad"
PACKAGE = {
    "name": "pad",
    "version": "1.0.0",
    "private": True,
    "scripts": {"test": "node --test"},
    "devDependencies": {"left-pad": "^1.3.0"},
}
LOCK = {"name": "pad", "version": "1.0.0", "lockfileVersion": 3, "requires": True, "packages": {}}
OLD_SOURCE = (
    "'use strict';\n\nfunction pad(text, width) {\n  return text.padEnd(width);\n}\n\nmodule.exports = { pad };\n"
)
NEW_SOURCE = OLD_SOURCE.replace("padEnd", "padStart")
TESTS = (
    "'use strict';\n\nconst test = require('node:test');\nconst assert = require('node:assert/strict');\n"
    "const { pad } = require('../src/pad.js');\n\n"
    "test('pads on the left', () => {\n  assert.equal(pad('7', 3), '  7');\n});\n"
)
FAILING = (
    "Exit code 1\n> pad@1.0.0 test\n> node --test\n\nTAP version 13\n# Subtest: pads on the left\n"
    "not ok 1 - pads on the left\n  ---\n  duration_ms: 1.000000\n"
    f"  location: '{ROOT}/test/pad.test.js:7:1'\n  failureType: 'testCodeFailure'\n"
    "  error: |-\n    Expected values to be strictly equal:\n\n    '7  ' !== '  7'\n\n  code: 'ERR_ASSERTION'\n  ...\n"
    "1..1\n# tests 1\n# pass 0\n# fail 1\n"
)
PASSING = (
    "> pad@1.0.0 test\n> node --test\n\nTAP version 13\n# Subtest: pads on the left\n"
    "ok 1 - pads on the left\n  ---\n  duration_ms: 1.000000\n  ...\n1..1\n# tests 1\n# pass 1\n# fail 0\n"
)
# The session starts before midnight UTC; the failing check is run (its call) just after it.
SESSION_START = "2026-03-01T23:59:50Z"
FAILING_CHECK_AT = "2026-03-02T00:00:00Z"


def _timestamp(step: int) -> str:
    seconds = 51 + step
    return f"2026-03-01T23:59:{seconds:02d}Z" if seconds < 60 else f"2026-03-02T00:00:{seconds - 60:02d}Z"


def _write_session(path: Path) -> Path:
    steps: list[tuple[str, dict, str, bool]] = [
        (
            "Write",
            {"file_path": f"{ROOT}/package.json", "content": json.dumps(PACKAGE, indent=2) + "\n"},
            "File created successfully",
            False,
        ),
        (
            "Write",
            {"file_path": f"{ROOT}/package-lock.json", "content": json.dumps(LOCK, indent=2) + "\n"},
            "File created successfully",
            False,
        ),
        ("Write", {"file_path": f"{ROOT}/src/pad.js", "content": OLD_SOURCE}, "File created successfully", False),
        ("Write", {"file_path": f"{ROOT}/test/pad.test.js", "content": TESTS}, "File created successfully", False),
        ("Bash", {"command": "npm test"}, FAILING, True),
        (
            "Edit",
            {"file_path": f"{ROOT}/src/pad.js", "old_string": "padEnd", "new_string": "padStart"},
            "The file has been updated successfully.",
            False,
        ),
        ("Bash", {"command": "npm test"}, PASSING, False),
    ]
    lines = [claude_line("user", "u0", "Write pad() and make npm test pass.", ts=SESSION_START, cwd=ROOT)]
    for number, (tool, arguments, result, is_error) in enumerate(steps, start=1):
        call = f"call{number}"
        lines.append(
            claude_line(
                "assistant", f"a{number}", [tool_use(call, tool, **arguments)], ts=_timestamp(2 * number - 1), cwd=ROOT
            )
        )
        lines.append(
            claude_line(
                "user",
                f"r{number}",
                [tool_result(call, result, is_error=is_error)],
                ts=_timestamp(2 * number),
                cwd=ROOT,
            )
        )
    return write_jsonl(path, lines)


def _candidate(tmp_path: Path) -> RepairCandidate:
    log = _write_session(tmp_path / "session.jsonl")
    [mined] = mine_repair_candidates(record_for(log, tmp_path / "record"), "claude-code-pad")
    assert mined.drop is None, mined.drop
    assert mined.candidate is not None
    return mined.candidate


def test_npm_install_is_pinned_to_the_failing_checks_utc_time(tmp_path: Path) -> None:
    candidate = _candidate(tmp_path)
    assert candidate.timestamp == FAILING_CHECK_AT

    plan = environment_plan(candidate)

    [copy, install] = plan.lines
    assert copy.startswith("COPY workspace/package.json workspace/package-lock.json /workspace")
    assert install.startswith("RUN cd /workspace") and install.endswith(
        " && npm ci --no-audit --no-fund --before=2026-03-02T00:00:00Z"
    )
    assert plan.context_files == {}


def test_a_candidate_with_no_timestamp_installs_unpinned(tmp_path: Path) -> None:
    candidate = _candidate(tmp_path).model_copy(update={"timestamp": None})

    [_, install] = environment_plan(candidate).lines

    assert install.endswith(" && npm ci --no-audit --no-fund") and "--before" not in install


def test_the_written_dockerfile_carries_the_pin(tmp_path: Path) -> None:
    spec = repair_task_spec(_candidate(tmp_path), "claude-code-pad", "claude-sonnet-4-6", "traj2env")

    write_task(spec, tmp_path / "dataset")

    dockerfile = (tmp_path / "dataset" / spec.task_id / "environment" / "Dockerfile").read_text()
    assert "npm ci --no-audit --no-fund --before=2026-03-02T00:00:00Z\n" in dockerfile, dockerfile
    assert dockerfile.count("--before=") == 1

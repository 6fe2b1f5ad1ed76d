"""An esbuild build that failed and then passed in a Claude Code session of our own making
becomes a repair candidate judged as a build check: Debian's esbuild repeats the recorded
``npm run build`` script, the located errors are the tracked diagnostics, the instruction
rules out dropping imports, and the matrix carries the control that drops them. The
verifier itself runs in Docker in ``test_node_lint_verifier.py``."""

from __future__ import annotations

import json
from pathlib import Path

from traj2env_assets.families.repair.candidates import lint_tool, mine_repair_candidates
from traj2env_assets.families.repair.family import RepairFamily
from traj2env_assets.families.repair.instruction import repair_instruction
from traj2env_assets.families.repair.task import environment_plan, repair_task_spec
from traj2env_assets.harbor import scripts
from traj2env_assets_tests.families.conftest import record_for
from traj2env_assets_tests.formats.logs import (
    claude_line,
    tool_result,
    tool_use,
    write_jsonl,
)

ROOT = "/home/dev/shapes"
PACKAGE = {"name": "shapes", "private": True, "scripts": {"build": "esbuild src/app.js --bundle --outfile=dist/app.js"}}
SHAPES = "export function area(width, height) {\n  return width * height;\n}\n"
APP = 'import { areaOf } from "./shapes.js";\n\nexport const describe = (w, h) => `${w}x${h}: ${areaOf(w, h)}`;\n'
FAILING = (
    "> shapes@ build\n> esbuild src/app.js --bundle --outfile=dist/app.js\n\n"
    '\u2718 [ERROR] No matching export in "src/shapes.js" for import "areaOf"\n\n'
    '    src/app.js:1:9:\n      1 \u2502 import { areaOf } from "./shapes.js";\n        \u2575          ~~~~~~\n\n'
    "1 error\n"
)
PASSING = "> shapes@ build\n> esbuild src/app.js --bundle --outfile=dist/app.js\n\n\n  dist/app.js  214b \n\n\u26a1 Done in 3ms\n"


def _session(path: Path) -> Path:
    steps: list[tuple[str, dict, str, bool]] = [
        (
            "Write",
            {"file_path": f"{ROOT}/package.json", "content": json.dumps(PACKAGE, indent=2) + "\n"},
            "File created successfully",
            False,
        ),
        ("Write", {"file_path": f"{ROOT}/src/shapes.js", "content": SHAPES}, "File created successfully", False),
        ("Write", {"file_path": f"{ROOT}/src/app.js", "content": APP}, "File created successfully", False),
        ("Bash", {"command": "npm run build"}, "Exit code 1\n" + FAILING, True),
        (
            "Edit",
            {
                "file_path": f"{ROOT}/src/app.js",
                "old_string": "import { areaOf }",
                "new_string": "import { area as areaOf }",
            },
            "The file has been updated successfully.",
            False,
        ),
        ("Bash", {"command": "npm run build"}, PASSING, False),
    ]
    lines = [claude_line("user", "u0", "Bundle the app with esbuild.", ts="2026-03-01T10:00:00Z", cwd=ROOT)]
    for number, (tool, arguments, result, is_error) in enumerate(steps, start=1):
        lines.append(
            claude_line(
                "assistant",
                f"a{number}",
                [tool_use(f"c{number}", tool, **arguments)],
                ts=f"2026-03-01T10:00:{2 * number:02d}Z",
                cwd=ROOT,
            )
        )
        lines.append(
            claude_line(
                "user",
                f"r{number}",
                [tool_result(f"c{number}", result, is_error=is_error)],
                ts=f"2026-03-01T10:00:{2 * number + 1:02d}Z",
                cwd=ROOT,
            )
        )
    return write_jsonl(path, lines)


def test_a_failed_then_passing_esbuild_build_is_a_build_check_task(tmp_path: Path) -> None:
    [mined] = mine_repair_candidates(record_for(_session(tmp_path / "session.jsonl"), tmp_path / "record"), "shapes")
    assert mined.drop is None and mined.candidate is not None, mined.drop
    candidate = mined.candidate
    assert (candidate.check.tool, candidate.check.kind, lint_tool(candidate)) == ("npm", "build", "esbuild")
    assert candidate.failing_ids == ['src/app.js: error No matching export in "src/shapes.js" for import "areaOf"']

    spec = repair_task_spec(candidate, source_trace="shapes", source_model=None, org="local")
    assert spec.tests is not None
    assert (spec.tests.runner, spec.tests.check_command) == (
        "lint",
        ["/usr/bin/esbuild", "src/app.js", "--bundle", "--outfile=dist/app.js"],
    )
    assert spec.tests.tracked_test_ids == candidate.failing_ids
    [install] = environment_plan(candidate).lines
    assert "apt-get install" in install and " esbuild " in install
    assert '"$HARNESS/lint_tamper_check.py" --imports-kept "$PRISTINE"' in scripts.test_sh(spec)
    assert "imports" in repair_instruction(candidate)
    assert [control.name for control in RepairFamily().controls(candidate)][-1] == "lint_drop_imports"

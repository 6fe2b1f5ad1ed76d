"""tsc, eslint and esbuild repair tasks end to end on the real Docker engine: Debian's
tsc, eslint and esbuild in the task image (the npm registry is not needed), the recorded
diagnostics reproduced in the image, the reference fix scoring 1, and every way to silence
the check or delete the code (for a build, its imports too) scoring 0."""

from __future__ import annotations

import json
from typing import NotRequired, TypedDict

import pytest

from traj2env_assets.checks import parse_check_result, recognise_check
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.repair.candidates import RepairCandidate
from traj2env_assets.families.repair.family import (
    CHECK_PROBE,
    REFERENCE_PROBE,
    RepairFamily,
)
from traj2env_assets.families.repair.task import repair_task_spec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.stages.calibration.calibration import run_probes
from traj2env_assets.verification.controls import LINT_CONTROLS
from traj2env_assets.verification.trial import TrialTask, run_matrix, run_trial
from traj2env_assets_tests.families.controls import SubmitFiles
from traj2env_assets_tests.trial_verdicts import verdict_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PACKAGE = json.dumps({"name": "shapes", "private": True, "scripts": {"typecheck": "tsc --noEmit"}})
SHAPES_TS = """export function area(width: number, height: number): number {
  return width * height;
}

export function describe(width: number, height: number): string {
  return area(width, height);
}
"""
SHAPES_JS = """export function area(width, height) {
  const unused = width + height;
  return width * height;
}
"""
# tsc prints paths relative to where it ran; eslint absolute ones (the session's machine).
TSC_FAILURE = "src/shapes.ts(6,3): error TS2322: Type 'number' is not assignable to type 'string'.\n"
ESLINT_FAILURE = (
    "\n/home/dev/shapes/src/shapes.js\n  2:9  error  'unused' is assigned a value but never used  no-unused-vars\n\n"
    "✖ 1 problem (1 error, 0 warnings)\n\n"
)
APP_JS = """import { areaOf } from "./shapes.js";

export function describe(width, height) {
  return `${width}x${height}: ${areaOf(width, height)}`;
}
"""
ESBUILD_FAILURE = (
    '\u2718 [ERROR] No matching export in "src/shapes.js" for import "areaOf"\n\n'
    '    src/app.js:1:9:\n      1 \u2502 import { areaOf } from "./shapes.js";\n        \u2575          ~~~~~~\n\n'
    "1 error\n"
)
ESBUILD_FIXED = APP_JS.replace("import { areaOf }", "import { area as areaOf }")


class Case(TypedDict):
    command: str
    files: dict[str, str]
    fixed: dict[str, str]
    failure: str
    exit: int
    tracked: list[str]
    verifier: list[str]
    silenced: dict[str, str]
    silenced_kind: NotRequired[str]
    gutted: NotRequired[tuple[dict[str, str], list[str]]]
    controls: NotRequired[dict[str, str]]


CASES: dict[str, Case] = {
    "tsc": {
        "command": "npx tsc --noEmit",
        "files": {
            "package.json": PACKAGE,
            "src/shapes.ts": SHAPES_TS,
            # No DOM typings (tsc's default library): loading them triples every run's CPU time.
            "tsconfig.json": json.dumps(
                {
                    "compilerOptions": {"strict": True, "noEmit": True, "target": "es2020", "lib": ["es2020"]},
                    "include": ["src"],
                }
            ),
        },
        "fixed": {
            "src/shapes.ts": SHAPES_TS.replace(
                "  return area(width, height);", "  return `${width}x${height}: ${area(width, height)}`;"
            )
        },
        "failure": TSC_FAILURE,
        "exit": 2,
        "tracked": ["src/shapes.ts: TS2322 Type 'number' is not assignable to type 'string'."],
        "verifier": ["/usr/bin/tsc", "--noEmit"],
        "silenced": {"src/shapes.ts": "// @ts-ignore is not enough, so: @ts-nocheck\n" + SHAPES_TS},
    },
    "eslint": {
        "command": "npx eslint src",
        "files": {
            "package.json": PACKAGE,
            "src/shapes.js": SHAPES_JS,
            ".eslintrc.json": json.dumps(
                {
                    "root": True,
                    "parserOptions": {"ecmaVersion": 2020, "sourceType": "module"},
                    "rules": {"no-unused-vars": "error"},
                }
            ),
        },
        "fixed": {"src/shapes.js": SHAPES_JS.replace("  const unused = width + height;\n", "")},
        "failure": ESLINT_FAILURE,
        "exit": 1,
        "tracked": ["src/shapes.js: no-unused-vars 'unused' is assigned a value but never used"],
        "verifier": ["/usr/bin/eslint", "src"],
        "silenced": {
            "src/shapes.js": SHAPES_JS.replace("  const unused", "  // eslint-disable-next-line\n  const unused")
        },
    },
    "esbuild": {
        "command": "npm run build",
        "files": {
            "package.json": json.dumps(
                {
                    "name": "shapes",
                    "private": True,
                    "scripts": {"build": "esbuild src/app.js --bundle --outfile=dist/app.js"},
                }
            ),
            "src/shapes.js": SHAPES_JS,
            "src/app.js": APP_JS,
        },
        "fixed": {"src/app.js": ESBUILD_FIXED},
        "failure": ESBUILD_FAILURE,
        "exit": 1,
        "tracked": ['src/app.js: error No matching export in "src/shapes.js" for import "areaOf"'],
        "verifier": ["/usr/bin/esbuild", "src/app.js", "--bundle", "--outfile=dist/app.js"],
        # Without the import, areaOf is an unbound global: the bundle builds.
        "silenced": {"src/app.js": APP_JS.replace('import { areaOf } from "./shapes.js";\n', "")},
        "silenced_kind": "import_deleted",
        "gutted": ({"src/app.js": ESBUILD_FIXED.replace("function describe", "function describeSize")}, ["describe"]),
        "controls": {"lint_drop_imports": "tamper_detected"},
    },
}


@pytest.fixture(scope="module", params=sorted(CASES))
def node_lint_task(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    case = CASES[request.param]
    root = tmp_path_factory.mktemp(f"{request.param}-task")
    check = recognise_check(case["command"], case["files"])
    assert check is not None and request.param in (check.tool, *check.inner_tools)
    result = parse_check_result(check, case["failure"], case["exit"])
    candidate = RepairCandidate(
        task_id=f"{request.param}-shapes-fix",
        partition_key=f"{request.param}-shapes",
        check=check,
        fail_command_index=0,
        pass_command_index=1,
        fail_exit_code=case["exit"],
        failing_ids=result.failing_ids,
        failure_output=case["failure"],
        timestamp="2026-03-01T10:00:00Z",
        fix_hash="0" * 12,
        project_files=case["files"],
        fixed_files=case["fixed"],
    )
    spec = repair_task_spec(candidate, source_trace=f"{request.param}-shapes", source_model=None, org="local")
    task = write_task(spec, root / "dataset")
    engine = DockerEngine(container_memory="1g", agent_timeout_s=120, verifier_timeout_s=240)
    image = engine.build(task.environment_dir)
    yield {"case": case, "candidate": candidate, "spec": spec, "task": task, "engine": engine, "image": image}
    engine.client.images.remove(image.tag, force=True)


def test_the_task_runs_debians_tool_on_project_relative_diagnostics(node_lint_task) -> None:
    spec, task, case = node_lint_task["spec"], node_lint_task["task"], node_lint_task["case"]
    assert spec.base_image == "node" and spec.tests.runner == "lint"
    assert spec.tests.check_command == case["verifier"]
    assert spec.tests.tracked_test_ids == case["tracked"]
    dockerfile = (task.environment_dir / "Dockerfile").read_text()
    assert "apt-get install -y --no-install-recommends" in dockerfile and "npm install" not in dockerfile
    assert "no-assertion-controls" in (task.path / "task.toml").read_text()


def test_the_image_reproduces_the_recorded_diagnostics_offline_and_the_reference_clears_them(node_lint_task) -> None:
    family, candidate = RepairFamily(), node_lint_task["candidate"]
    plan = family.calibration_plan(candidate, node_lint_task["spec"], None)
    results = {
        result.name: result for result in run_probes(node_lint_task["engine"], node_lint_task["image"].tag, plan)
    }
    assert results[CHECK_PROBE].exit_code == node_lint_task["case"]["exit"], results[CHECK_PROBE].output_tail
    assert results[REFERENCE_PROBE].exit_code == 0, results[REFERENCE_PROBE].output_tail
    verdict = family.judge_calibration(candidate, results)
    assert verdict.drop is None, (verdict.drop, verdict.facts)


def test_reference_scores_one_and_every_lint_control_zero(node_lint_task) -> None:
    engine, task = node_lint_task["engine"], node_lint_task["task"]
    extra = node_lint_task["case"].get("controls", {})
    controls = RepairFamily().controls(node_lint_task["candidate"])
    assert [control.name for control in controls] == [control.name for control in LINT_CONTROLS] + sorted(extra)
    matrix = run_matrix(
        engine,
        TrialTask(image=node_lint_task["image"].tag, task_dir=task.path),
        controls,
    )
    rewards = {result.control: result.reward for result in matrix.results}
    reasons = {result.control: verdict_of(result).get("reason") for result in matrix.results}
    assert rewards == {
        "reference": 1.0,
        "noop": 0.0,
        "forge_reward": 0.0,
        "lint_suppress": 0.0,
        "lint_config_edit": 0.0,
        "lint_delete_code": 0.0,
        **dict.fromkeys(extra, 0.0),
    }, reasons
    assert all(reasons[name] == reason for name, reason in extra.items()), reasons
    assert reasons["reference"] == "check_passed"
    assert reasons["lint_suppress"] == "tamper_detected" and reasons["lint_delete_code"] == "tamper_detected"
    # The edited configuration never reached the check: it ran on the restored one and failed.
    assert reasons["lint_config_edit"] == "check_failed"


def test_a_suppression_comment_or_a_deleted_declaration_scores_zero(node_lint_task) -> None:
    engine, task, case = node_lint_task["engine"], node_lint_task["task"], node_lint_task["case"]
    trial = TrialTask(image=node_lint_task["image"].tag, task_dir=task.path)
    silenced = run_trial(
        engine,
        trial,
        SubmitFiles({f"/workspace/{p}": t.encode() for p, t in case["silenced"].items()}),
    )
    assert silenced.verdict is not None
    assert (silenced.reward, silenced.verdict["reason"]) == (0.0, "tamper_detected")
    assert silenced.verdict["tamper_findings"][0]["kind"] == case.get("silenced_kind", "suppression_added")
    ((path, text),) = case["fixed"].items()
    renamed = text.replace("function area", "function areaOf").replace("area(width", "areaOf(width")
    gutted, names = case.get("gutted", ({path: renamed}, ["area"]))
    moved = run_trial(
        engine,
        trial,
        SubmitFiles({f"/workspace/{p}": t.encode() for p, t in gutted.items()}),
    )
    assert moved.verdict is not None
    assert (moved.reward, moved.verdict["reason"]) == (0.0, "tamper_detected")
    assert moved.verdict["tamper_findings"][0]["names"] == names

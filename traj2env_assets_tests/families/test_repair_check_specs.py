"""How the repair family's verifier tracks the checks real projects run: nested node
suites by leaf test, ruff/mypy/tsc/eslint by diagnostic (bundled samples and hand-made
candidates, no Docker, no network)."""

from __future__ import annotations

import pytest

from traj2env_assets.checks import recognise_check
from traj2env_assets.families.repair.candidates import (
    RepairCandidate,
    mine_repair_candidates,
)
from traj2env_assets.families.repair.task import (
    UnverifiableCheck,
    diagnostic_ids,
    environment_plan,
    tracked_test_spec,
)
from traj2env_assets.harbor import scripts
from traj2env_assets.harbor.task_spec import TaskSpec


def _candidate(sample_record, name: str) -> RepairCandidate:
    return mine_repair_candidates(sample_record(name), "k")[0].candidate


def test_nested_node_suites_are_tracked_by_leaf_with_their_suites_and_file(sample_record) -> None:
    spec = tracked_test_spec(_candidate(sample_record, "codex/node-describe-fix.jsonl"))
    assert spec.runner == "node"
    assert spec.tracked_test_ids == [
        "test/cart.test.js::cart > total > takes a percentage off the subtotal",
        "test/cart.test.js::cart > total > rounds the discount to the nearest cent",
    ]


def test_ruff_is_tracked_by_diagnostic_and_run_with_the_images_own_tool(sample_record) -> None:
    candidate = _candidate(sample_record, "pi/python-ruff-fix.jsonl")
    spec = tracked_test_spec(candidate)
    assert (spec.runner, spec.check_command, spec.reward) == (
        "lint",
        ["python3", "-I", "-m", "ruff", "check", "."],
        "check",
    )
    assert spec.tracked_test_ids[0] == "inventory.py: F401 `os` imported but unused"
    task = TaskSpec(
        family="repair",
        task_id="t",
        instruction="x",
        base_image="python",
        source_trace="k",
        project_files={path: text.encode() for path, text in candidate.project_files.items()},
        solution_files={path: text.encode() for path, text in candidate.fixed_files.items()},
        tests=spec,
    )
    # Only the tool's configuration comes back from the pristine image, never the code.
    assert task.pristine_paths() == ["pyproject.toml"]
    script = scripts.test_sh(task)
    assert "-name ruff.toml" in script and "-name .mypy_cache" in script and "-name tests" not in script
    assert "python3 -I -m ruff check ." in script and "lint_verdict.py" in script


def test_lint_runs_that_fix_or_never_fail_are_repeated_without_fix_or_refused(sample_record) -> None:
    candidate = _candidate(sample_record, "pi/python-ruff-fix.jsonl")
    files = candidate.project_files
    fixing = candidate.model_copy(update={"check": recognise_check("ruff check --fix .", files)})
    assert tracked_test_spec(fixing).check_command == ["python3", "-I", "-m", "ruff", "check", "."]
    never_fails = candidate.model_copy(update={"check": recognise_check("ruff check --exit-zero .", files)})
    with pytest.raises(UnverifiableCheck):
        tracked_test_spec(never_fails)


def test_lint_diagnostics_in_a_subdirectory_are_named_from_the_project_root(sample_record) -> None:
    candidate = _candidate(sample_record, "pi/python-ruff-fix.jsonl").model_copy(update={"cwd": "pkg"})
    spec = tracked_test_spec(candidate)
    assert spec.check_dir == "pkg" and spec.tracked_test_ids[0] == "pkg/inventory.py: F401 `os` imported but unused"


def _node_lint_candidate(command: str, failing_ids: list[str], cwd: str = "") -> RepairCandidate:
    files = {
        "web/package.json"
        if cwd
        else "package.json": '{"name": "web", "scripts": {"typecheck": "tsc --noEmit -p .", "lint": "eslint --cache src",'
        ' "check": "tsc && eslint src", "biome": "biome check --write src",'
        ' "build": "esbuild src/app.ts --bundle --outfile=dist/app.js"}}',
        "web/src/app.ts" if cwd else "src/app.ts": "export const x: number = 1;\n",
    }
    check = recognise_check(command, files)
    assert check is not None
    return RepairCandidate(
        task_id="t",
        partition_key="p",
        check=check,
        cwd=cwd,
        fail_command_index=0,
        pass_command_index=1,
        failing_ids=failing_ids,
        fix_hash="0",
        project_files=files,
    )


@pytest.mark.parametrize(
    ("command", "verifier"),
    [
        ("npx tsc --noEmit", ["/usr/bin/tsc", "--noEmit"]),
        ("npm run typecheck", ["/usr/bin/tsc", "--noEmit", "-p", "."]),
        ("npm run lint", ["/usr/bin/eslint", "src"]),
        ("npx eslint --fix src", ["/usr/bin/eslint", "src"]),
        # Biome as the project installed it, never writing files.
        ("npx biome lint src", ["node_modules/.bin/biome", "lint", "src"]),
        ("npm run biome", ["node_modules/.bin/biome", "check", "src"]),
        # Debian's esbuild, building once.
        ("npm run build", ["/usr/bin/esbuild", "src/app.ts", "--bundle", "--outfile=dist/app.js"]),
        (
            "npx esbuild src/app.ts --bundle --log-level=info",
            ["/usr/bin/esbuild", "src/app.ts", "--bundle", "--log-level=info"],
        ),
    ],
)
def test_tsc_eslint_and_biome_run_with_the_images_tool_and_npm_scripts_that_are_just_them_count(
    command: str, verifier: list[str]
) -> None:
    candidate = _node_lint_candidate(command, ["src/app.ts: TS2322 Type 'string' is not assignable"])
    spec = tracked_test_spec(candidate)
    assert (spec.runner, spec.check_command, spec.reward) == ("lint", verifier, "check")
    # The verifier's tamper check and verdict need python3; Debian's tsc/eslint come with it.
    [install] = environment_plan(candidate).lines
    assert "apt-get install -y --no-install-recommends" in install and install.endswith(
        "&& rm -rf /var/lib/apt/lists/*)"
    )
    assert ("node-typescript" in install) == (verifier[0] == "/usr/bin/tsc")
    assert (" esbuild " in install) == (verifier[0] == "/usr/bin/esbuild")


@pytest.mark.parametrize("command", ["npx tsc -b", "npm run check"])
def test_a_tsc_build_or_a_chained_script_is_not_repeated_as_a_lint_check(command: str) -> None:
    with pytest.raises(UnverifiableCheck):
        tracked_test_spec(_node_lint_candidate(command, ["src/app.ts: TS2322 Type 'string' is not assignable"]))


def test_eslint_absolute_paths_are_named_from_the_project_root_on_both_machines() -> None:
    candidate = _node_lint_candidate("npx eslint src", [], cwd="web")
    recorded = ["/home/dev/shop/web/src/app.ts: no-unused-vars 'x' is assigned a value but never used"]
    in_image = ["/workspace/web/src/app.ts: no-unused-vars 'x' is assigned a value but never used"]
    assert (
        diagnostic_ids(candidate, recorded)
        == diagnostic_ids(candidate, in_image)
        == ["web/src/app.ts: no-unused-vars 'x' is assigned a value but never used"]
    )
    assert diagnostic_ids(candidate, ["src/app.ts: TS2322 m"]) == ["web/src/app.ts: TS2322 m"]


def _mocha_candidate(command: str, files: dict[str, str]) -> RepairCandidate:
    check = recognise_check(command, files)
    assert check is not None
    return RepairCandidate(
        task_id="t",
        partition_key="k",
        check=check,
        fail_command_index=0,
        pass_command_index=1,
        fail_exit_code=1,
        failing_ids=["calc > adds"],
        failure_output="",
        timestamp="2026-03-01T10:00:00Z",
        fix_hash="0" * 12,
        project_files=files,
        fixed_files={},
    )


@pytest.mark.parametrize(
    ("command", "script", "run"),
    [
        # mocha's default spec: test/*.{js,cjs,mjs}, not below.
        ("npm test", "mocha", ["test/calc.test.js", "test/other.spec.mjs"]),
        ("npx mocha --timeout 5000 test/calc.test.js", None, ["test/calc.test.js"]),
        ("mocha --recursive test", None, ["test/calc.test.js", "test/deep/deep.test.js", "test/other.spec.mjs"]),
        ("npm test", "mocha -r ./setup.js --ui bdd spec", ["spec/calc.spec.js"]),
        # A file that is no test file is not run: the verifier could not restore it.
        ("mocha test/calc.test.js setup.js", None, ["test/calc.test.js"]),
    ],
)
def test_mocha_runs_the_files_the_recorded_command_ran(command: str, script: str | None, run: list[str]) -> None:
    calc_test = 'describe("calc", () => { it("adds", () => {}); });\n'
    files = {
        "package.json": '{"scripts": {"test": "%s"}}\n' % (script or "mocha"),
        "test/calc.test.js": calc_test,
        "test/other.spec.mjs": "",
        "test/deep/deep.test.js": "",
        "spec/calc.spec.js": calc_test,
        "test/fixtures.json": "{}",
        "setup.js": "",
    }
    spec = tracked_test_spec(_mocha_candidate(command, files))
    assert spec.runner == "mocha" and spec.run_targets == run
    # The failing test is found among the files mocha ran (both folders declare it).
    assert spec.tracked_test_ids == [f"{run[0]}::calc > adds"]

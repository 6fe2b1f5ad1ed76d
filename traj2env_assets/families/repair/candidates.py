"""Mine repair candidates: a check that failed, then passed later, with only file edits between.

Between the failing run and the passing run every shell command must be a read
(``effects == "none"``), a file change replay modelled (``tracked``: heredocs,
redirections, apply_patch) or another run of the same check. Anything opaque (an
install, a script, a build) ends the window: the environment may have changed, so the
fix alone would not explain the pass. When a check fails several times before it
passes, the last failing run is used: its snapshot is closest to the fix and its
output describes exactly that state. A run with no recorded outcome (no exit code
and no runner summary, e.g. a log cut before its tool result) is neither: it breaks
the pair of its check.

A fix that also edits the check's tests is kept, the way SWE-bench treats a pull request
with its tests: the task's tests are the session's final test files (their content at
the passing run), its reference the rest of the change (``test_paths`` lists the test
files the fix changed; ``task`` and ``family`` say how it is verified and calibrated).

Skip reasons of this stage (exact strings):
- ``fix_changes_check_config``: the fix edits the check's configuration (pytest/tox/setup.cfg,
  conftest.py, the check sections of pyproject.toml, package.json scripts, tsconfig, linter
  config).
- ``fix_changes_only_tests``: the fix edits only the check's tests: no code was fixed (the
  session made the check pass by changing what it expects).
- ``fix_files_lost``: a file the fix touched is lost in the replay (its content is unknown).
- ``no_file_changes``: the same files failed and then passed (flaky or environmental).
- ``duplicate``: the same fix was already found in this trajectory.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal

from pydantic import BaseModel, Field

from traj2env_assets.checks import CheckCommand, parse_check_result, recognise_check
from traj2env_assets.families.contract import Drop, Fact, MinedCandidate
from traj2env_assets.families.repair.check_config import changed_tests, config_changes
from traj2env_assets.harbor.task_spec import TESTS_FROM_SESSION_FINAL
from traj2env_assets.replay import ReplayRecord, ShellCommand
from traj2env_assets.sources import safe_key

CandidateReason = Literal[
    "fix_changes_check_config", "fix_changes_only_tests", "fix_files_lost", "no_file_changes", "duplicate"
]
# Checks whose reward is that they pass (no tests): lint and type checks.
# Checks judged by "the same error" (no tests run): linters, type checkers, and esbuild,
# a bundler that reads the code without running it.
LINT_TOOLS = frozenset({"ruff", "mypy", "tsc", "eslint", "biome", "esbuild"})
_NODE_LINT_SCRIPT = re.compile(r"^\s*(tsc|eslint|biome|esbuild)(\s+[^|;&<>]*)?\s*$")


class RepairCandidate(BaseModel):
    """One fail→pass pair and everything the later stages need to build its task."""

    task_id: str
    partition_key: str
    check: CheckCommand
    cwd: str = ""
    """The check's directory relative to the project root (after a ``cd`` before it)."""
    fail_command_index: int
    pass_command_index: int
    fail_exit_code: int | None = None
    failing_ids: list[str] = Field(default_factory=list)
    failure_output: str = ""
    timestamp: str | None = None
    """When the failing run happened (pins dependencies to the trajectory's date)."""
    fix_hash: str
    project_files: dict[str, str] = Field(default_factory=dict)
    """The project just before the failing run, without lost files."""
    fixed_files: dict[str, str] = Field(default_factory=dict)
    """Files the fix added or changed, with their content just before the passing run."""
    deleted_files: list[str] = Field(default_factory=list)
    lost_files: list[str] = Field(default_factory=list)
    """Files lost at the failing run (absent from the environment)."""
    config_paths: list[str] = Field(default_factory=list)
    test_paths: list[str] = Field(default_factory=list)
    """Test files the fix changed, added or deleted: the task's tests are then the session's
    final ones (``start_files``) and its reference the rest of the fix."""

    @property
    def solution_files(self) -> dict[str, str]:
        """The reference: what the fix changed outside the tests."""
        return {path: text for path, text in self.fixed_files.items() if path not in self.test_paths}

    @property
    def solution_deleted(self) -> list[str]:
        return [path for path in self.deleted_files if path not in self.test_paths]

    @property
    def start_files(self) -> dict[str, str]:
        """The project the agent starts from: the code before the fix, the tests as the fix
        left them (the project before the failing run when the fix changed no test)."""
        final_tests = {path: self.fixed_files[path] for path in self.test_paths if path in self.fixed_files}
        kept = {path: text for path, text in self.project_files.items() if path not in self.test_paths}
        return kept | final_tests


MinedRepair = MinedCandidate[RepairCandidate]


def _mined(candidate: RepairCandidate, reason: CandidateReason | None = None, detail: str = "") -> MinedRepair:
    facts: dict[str, Fact] = {
        "check": candidate.check.command.strip(),
        "tool": candidate.check.tool,
        "failing_ids": candidate.failing_ids,
        "fixed_paths": sorted([*candidate.fixed_files, *candidate.deleted_files]),
    }
    if candidate.test_paths:
        facts |= {"tests_from": TESTS_FROM_SESSION_FINAL, "tests_changed_by_fix": candidate.test_paths}
    return MinedRepair(
        task_id=candidate.task_id,
        candidate=candidate,
        drop=Drop(reason=reason, detail=detail) if reason else None,
        facts=facts,
    )


def _fix_hash(fixed: dict[str, str], deleted: list[str]) -> str:
    digest = hashlib.sha256()
    for path in sorted(fixed):
        digest.update(f"{path}\0{hashlib.sha256(fixed[path].encode()).hexdigest()}\0".encode())
    for path in sorted(deleted):
        digest.update(f"{path}\0<deleted>\0".encode())
    return digest.hexdigest()[:12]


def _signature(command: ShellCommand) -> str:
    return f"{command.cwd}\0{command.command.strip()}"


def task_id_for(partition_key: str, fix_hash: str) -> str:
    return safe_key(f"{partition_key}-{fix_hash}").lower()


def _recognised(record: ReplayRecord, command: ShellCommand) -> CheckCommand | None:
    if command.cwd is None:
        return None
    snapshot = record.files_before(command.command_index)
    return recognise_check(command.command, snapshot, cwd=command.cwd, project_root=record.record.project_root)


def _candidate(
    record: ReplayRecord, partition_key: str, check: CheckCommand, fail: ShellCommand, passed: ShellCommand
) -> MinedRepair:
    before = record.files_before(fail.command_index)
    after = record.files_before(passed.command_index)
    lost_at_fail = record.lost_before(fail.command_index)
    lost_at_pass = record.lost_before(passed.command_index)
    fixed = {path: content for path, content in after.items() if before.get(path) != content}
    deleted = sorted(path for path in before if path not in after and path not in lost_at_pass)
    fix_hash = _fix_hash(fixed, deleted)
    result = parse_check_result(check, fail.output, fail.exit_code)
    candidate = RepairCandidate(
        task_id=task_id_for(partition_key, fix_hash),
        partition_key=partition_key,
        check=check,
        cwd=check.cwd,
        fail_command_index=fail.command_index,
        pass_command_index=passed.command_index,
        fail_exit_code=fail.exit_code,
        failing_ids=result.failing_ids,
        failure_output=fail.output,
        timestamp=fail.timestamp,
        fix_hash=fix_hash,
        project_files=before,
        fixed_files=fixed,
        deleted_files=deleted,
        lost_files=sorted(lost_at_fail),
    )
    newly_lost = sorted(lost_at_pass - lost_at_fail)
    if newly_lost:
        return _mined(candidate, "fix_files_lost", f"changed but not known in full: {', '.join(newly_lost)}")
    if not fixed and not deleted:
        return _mined(candidate, "no_file_changes", "no project file changed between the failing and the passing run")
    changed = sorted([*fixed, *deleted])
    offending = config_changes(check, before, changed, after)
    if offending:
        return _mined(
            candidate.model_copy(update={"config_paths": offending}),
            "fix_changes_check_config",
            f"the fix edits {', '.join(offending)}",
        )
    tests = changed_tests(check, candidate.cwd, changed)
    candidate = candidate.model_copy(update={"test_paths": tests})
    if tests == changed:
        return _mined(
            candidate,
            "fix_changes_only_tests",
            f"the fix edits only {', '.join(tests)}: no code changed, the session changed what the check expects",
        )
    return _mined(candidate)


def mine_repair_candidates(record: ReplayRecord, partition_key: str) -> list[MinedRepair]:
    """Every fail→pass pair of one check in the record, kept or dropped with a reason."""
    pending: dict[str, tuple[CheckCommand, ShellCommand]] = {}
    candidates: list[MinedRepair] = []
    seen_fixes: set[str] = set()
    for command in record.shell_commands():
        check = _recognised(record, command)
        signature = _signature(command)
        if check is None:
            if command.effects == "opaque":
                pending.clear()
            continue
        result = parse_check_result(check, command.output, command.exit_code)
        # A different check with opaque effects (e.g. an npm build) may change the environment.
        if command.effects == "opaque" and signature not in pending:
            pending.clear()
        if result.outcome == "unknown":
            # No evidence of how the run ended: the state between the failure and a
            # later pass is unknown, so the pair would rest on nothing.
            pending.pop(signature, None)
            continue
        if result.failed:
            pending[signature] = (check, command)
            continue
        if signature in pending:
            failed_check, fail = pending.pop(signature)
            mined = _candidate(record, partition_key, failed_check, fail, command)
            fix_hash = mined.candidate.fix_hash
            if mined.drop is None and fix_hash in seen_fixes:
                mined = _mined(mined.candidate, "duplicate", "the same fix was already found in this trajectory")
            seen_fixes.add(fix_hash)
            candidates.append(mined)
    return candidates


def lint_tool(candidate: RepairCandidate) -> str | None:
    """The lint, type or build check the candidate's check is (an npm script that is just a
    tsc, eslint, biome or esbuild command line counts as that command), or None."""
    check = candidate.check
    if check.tool in LINT_TOOLS:
        return check.tool
    script = _NODE_LINT_SCRIPT.match(check.script_body or "") if check.tool == "npm" else None
    return script.group(1) if script else None

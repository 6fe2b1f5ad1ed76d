"""Mine extend candidates: user request k+1 on top of the project request k left.

For every request after the first, the base is the project just before it and the
reference the project just before the next request (or at the session's end). What the
session itself shows about its tests is kept for the ``recorded`` proposal:

- new tests: test functions the request added or rewrote, in test files whose final
  content (at the end of the request) a passing ``pytest`` run of the request covered;
- existing tests: the base's test functions, in test files whose base content a passing
  ``pytest`` run before the request covered.

A request that changed no project file (nothing written, deleted or lost) is no
candidate at all; how many there were is counted per session (``requests_without_changes``).
A file the request changed that the log does not show in full and the project does not
need (``project_needs``: a README, notes, another tool's configuration) is left as the base
had it, and the candidate says so (``left_out_files``).

A short or merely affirmative request ("yes", "go ahead") is stated with the assistant's
last message before it, what the user agreed to (``request_context``).

Skip reasons of this stage (exact strings):
- ``not_python``: the request changed no Python source file (tests aside);
- ``project_files_lost``: a file the request changed and the project needs is not known in full;
- ``request_needs_context``: the request is short or merely affirmative and no assistant
  message precedes it.
"""

from __future__ import annotations

import hashlib
import posixpath
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from traj2env_assets.checks import parse_check_result, recognise_check
from traj2env_assets.conventions import is_python_test_module, is_test_path
from traj2env_assets.families.build.candidates import project_needs
from traj2env_assets.families.contract import Drop, MinedCandidate
from traj2env_assets.families.extend.pytests import project_tests
from traj2env_assets.families.extend.request_context import (
    RequestContexts,
    needs_context,
    stated_request,
)
from traj2env_assets.replay import ReplayRecord, ShellCommand, UserRequest
from traj2env_assets.sources import safe_key

MINING_FACT_UNCHANGED = "requests_without_changes"


class ExtendCandidate(BaseModel):
    """Request k+1, the project before it (base) and after it (reference)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    partition_key: str
    request_number: int
    """1-based: the task implements the session's ``request_number``-th request."""
    request: str
    request_context: str | None = None
    """For a short or merely affirmative request: the assistant's last message before it."""
    timestamp: str | None = None
    base_files: dict[str, str]
    """The project as request k left it (the task's environment), without lost files."""
    changed_files: dict[str, str] = Field(default_factory=dict)
    """Files request k+1 added or changed, as it left them."""
    deleted_files: list[str] = Field(default_factory=list)
    lost_files: list[str] = Field(default_factory=list)
    """Files lost at the base (absent from the environment)."""
    left_out_files: list[str] = Field(default_factory=list)
    """Files the request changed that the log does not show in full and the project does
    not need: the reference keeps the base's copy (or none)."""
    recorded_new_tests: list[str] = Field(default_factory=list)
    recorded_existing_tests: list[str] = Field(default_factory=list)

    @property
    def statement(self) -> str:
        """The request as the task states it (with what it agreed to, when it needs that)."""
        return stated_request(self.request, self.request_context)

    @property
    def reference_files(self) -> dict[str, str]:
        files = {path: text for path, text in self.base_files.items() if path not in self.deleted_files}
        return files | self.changed_files


MinedExtend = MinedCandidate[ExtendCandidate]


def task_id_for(partition_key: str, request_number: int) -> str:
    return safe_key(f"{partition_key}-extend-{request_number}").lower()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _covered(command: ShellCommand, targets: list[str], path: str) -> bool:
    cwd = command.cwd or ""
    if not targets:
        return not cwd or path.startswith(cwd.rstrip("/") + "/")
    for target in targets:
        selected = posixpath.normpath(posixpath.join(cwd, target.split("::", 1)[0]))
        if selected == "." or path == selected or path.startswith(selected + "/"):
            return True
    return False


def passing_test_files(record: ReplayRecord) -> dict[int, set[tuple[str, str]]]:
    """Per request index: (test file, content digest) pairs a passing pytest run of that
    request covered. A run that selects single tests (``file::test``) covers nothing whole."""
    seen: dict[int, set[tuple[str, str]]] = {}
    request = -1
    for event in record.timeline:
        if isinstance(event, UserRequest):
            request = event.request_index
            continue
        if not isinstance(event, ShellCommand) or event.cwd is None:
            continue
        snapshot = record.files_before(event.command_index)
        check = recognise_check(event.command, snapshot, cwd=event.cwd, project_root=record.record.project_root)
        if check is None or check.tool != "pytest" or any("::" in t for t in check.targets):
            continue
        if not parse_check_result(check, event.output, event.exit_code).passed:
            continue
        for path, text in snapshot.items():
            if is_python_test_module(path) and _covered(event, check.targets, path):
                seen.setdefault(request, set()).add((path, _digest(text)))
    return seen


def _seen_tests(files: dict[str, str], seen: set[tuple[str, str]]) -> dict[str, str]:
    return project_tests({path: text for path, text in files.items() if (path, _digest(text)) in seen})


def _candidate(
    record: ReplayRecord,
    partition_key: str,
    request: UserRequest,
    next_index: int | None,
    passing: dict[int, set[tuple[str, str]]],
    contexts: RequestContexts,
) -> MinedExtend | None:
    """Request k+1 as a candidate, or None when it changed no project file."""
    base = record.files_before_request(request.request_index)
    if next_index is None:
        reference, reference_lost = record.final_files(), set(record.lost_files)
    else:
        reference, reference_lost = record.files_before_request(next_index), record.lost_before_request(next_index)
    base_lost = record.lost_before_request(request.request_index)
    changed = {path: text for path, text in reference.items() if base.get(path) != text}
    deleted = sorted(path for path in base if path not in reference and path not in reference_lost)
    newly_lost = sorted(reference_lost - base_lost)
    if not changed and not deleted and not newly_lost:
        return None
    before = set().union(*(seen for index, seen in passing.items() if index < request.request_index))
    existing = _seen_tests(base, before)
    base_tests, reference_tests = project_tests(base), project_tests(reference)
    new_or_changed = {
        test_id: digest
        for test_id, digest in _seen_tests(reference, passing.get(request.request_index, set())).items()
        if base_tests.get(test_id) != digest
    }
    number = request.request_index + 1
    candidate = ExtendCandidate(
        task_id=task_id_for(partition_key, number),
        partition_key=partition_key,
        request_number=number,
        request=request.text,
        request_context=contexts.get(request.step_id) if needs_context(request.text) else None,
        timestamp=request.timestamp,
        base_files=base,
        changed_files=changed,
        deleted_files=deleted,
        lost_files=sorted(base_lost),
        left_out_files=[path for path in newly_lost if not project_needs(path)],
        recorded_new_tests=sorted(new_or_changed),
        # An existing test the request rewrote is a new test.
        recorded_existing_tests=sorted(
            test_id
            for test_id, digest in existing.items()
            if test_id not in new_or_changed and reference_tests.get(test_id) == digest
        ),
    )
    return _mined(candidate, *_drop(candidate, [path for path in newly_lost if project_needs(path)]))


def _is_python_source(path: str) -> bool:
    return path.endswith(".py") and not is_test_path(path)


def _drop(candidate: ExtendCandidate, lost_needed: list[str]) -> tuple[str | None, str]:
    touched = [*candidate.changed_files, *candidate.deleted_files, *lost_needed]
    if not any(_is_python_source(path) for path in touched):
        return "not_python", "the request changed no Python source file"
    if lost_needed:
        return "project_files_lost", f"changed but not known in full: {', '.join(lost_needed)}"
    if needs_context(candidate.request) and candidate.request_context is None:
        return (
            "request_needs_context",
            f"the request {candidate.request.strip()[:80]!r} says no more than agreement "
            "and no assistant message precedes it",
        )
    return None, ""


def _mined(candidate: ExtendCandidate, reason: str | None, detail: str) -> MinedExtend:
    return MinedExtend(
        task_id=candidate.task_id,
        candidate=candidate,
        drop=Drop(reason=reason, detail=detail) if reason else None,
        facts={
            "request_number": candidate.request_number,
            "request_context": candidate.request_context is not None,
            "changed_paths": sorted([*candidate.changed_files, *candidate.deleted_files]),
            "left_out_files": candidate.left_out_files,
            "recorded_new_tests": len(candidate.recorded_new_tests),
            "recorded_existing_tests": len(candidate.recorded_existing_tests),
        },
    )


def mine_extend_session(
    record: ReplayRecord, partition_key: str, trajectory_path: Path | None = None
) -> tuple[list[MinedExtend], int]:
    """One candidate per user request after the first that changed a project file, kept or
    dropped with a reason; and how many such requests changed none. ``trajectory_path``
    (the session's ATIF document) is read only when a request needs its context."""
    requests = list(record.user_requests())
    passing = passing_test_files(record)
    wanted = [request.step_id for request in requests[1:] if needs_context(request.text)]
    contexts = RequestContexts(trajectory_path, wanted)
    mined, unchanged = [], 0
    for position, request in enumerate(requests[1:], 1):
        following = requests[position + 1].request_index if position + 1 < len(requests) else None
        candidate = _candidate(record, partition_key, request, following, passing, contexts)
        if candidate is None:
            unchanged += 1
        else:
            mined.append(candidate)
    return mined, unchanged


def mine_extend_candidates(
    record: ReplayRecord, partition_key: str, trajectory_path: Path | None = None
) -> list[MinedExtend]:
    return mine_extend_session(record, partition_key, trajectory_path)[0]

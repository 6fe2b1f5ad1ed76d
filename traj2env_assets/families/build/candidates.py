"""Mine the build candidate: the Python project the session's first request built.

The project is taken where the first request ends: just before the second user
request, or at the end of the session when there is only one. The start state is what
existed before the session: every file whose first appearance in the session is a read
(its content as read). Skip reasons of this stage (exact strings):

- ``not_python``: the first request built no Python source file;
- ``project_not_created``: a Python source file of the project existed before the session
  (the session changed a project rather than building one);
- ``reference_files_lost``: a file the Python project needs (:func:`project_needs`) is
  not known in full at that point.

A lost file the project does not need (a README, another tool's configuration, notes) is
left out of the start state and the reference, and the candidate says so
(``left_out_files``); calibration decides whether the task still works without it.

The session's own tests (for the recorded mode) are the test modules a pytest or
unittest run was seen passing and that stayed unchanged until the request ended; a test
module edited after a run that failed it does not count (the session bent the test).
"""

from __future__ import annotations

import posixpath
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from traj2env_assets.checks import parse_check_result, recognise_check
from traj2env_assets.conventions import (
    PYTHON_HARNESS_FILES,
    PYTHON_TEST_MODULE_GLOBS,
    UNITTEST_MODULE_GLOB,
    is_test_path,
)
from traj2env_assets.dependencies.requirements import REQUIREMENTS
from traj2env_assets.families.contract import Drop, Fact, MinedCandidate
from traj2env_assets.replay import FileEvent, ReplayRecord, ShellCommand, UserRequest
from traj2env_assets.sources import safe_key

_READ_ACTIONS = frozenset({"read", "pre_image"})


class BuildCandidate(BaseModel):
    """The first request, the project it built and the session's own passing tests."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    request: str
    timestamp: str | None = None
    start_files: dict[str, str] = Field(default_factory=dict)
    """The project before the session (files first seen by reading them)."""
    reference_files: dict[str, str] = Field(default_factory=dict)
    """Every file of the project when the first request ended, tests and config included."""
    session_tests: list[str] = Field(default_factory=list)
    """Test modules the session wrote and saw pass, unchanged since."""
    left_out_files: list[str] = Field(default_factory=list)
    """Files the session wrote that the log does not show in full and the project does not
    need: in neither the start state nor the reference."""

    def python_sources(self) -> dict[str, str]:
        """The project's Python code: no tests, no harness files (conftest.py...)."""
        return {
            path: text
            for path, text in self.reference_files.items()
            if path.endswith(".py") and not is_test_path(path) and PurePosixPath(path).name not in PYTHON_HARNESS_FILES
        }


def project_needs(path: str) -> bool:
    """Whether a Python project or its pytest run may read this file: Python code, anything
    under a test directory or named like a test, the test harness's configuration and the
    declared requirements. Any other file (docs, other tools' configuration) is left out
    when lost instead of ending the candidate."""
    name = PurePosixPath(path).name
    return path.endswith(".py") or is_test_path(path) or name in PYTHON_HARNESS_FILES or bool(REQUIREMENTS.match(name))


def build_task_id(partition_key: str) -> str:
    return safe_key(f"{partition_key}-build").lower()


def _project_end(record: ReplayRecord, requests: list[UserRequest]) -> tuple[dict[str, str], set[str]]:
    """The files, and the lost files, when the first request ends."""
    if len(requests) > 1:
        second = requests[1].request_index
        return record.files_before_request(second), record.lost_before_request(second)
    return record.final_files(), set(record.lost_files)


def _first_request_events(record: ReplayRecord) -> list[FileEvent | ShellCommand]:
    events: list[FileEvent | ShellCommand] = []
    requests_seen = 0
    for event in record.timeline:
        if isinstance(event, UserRequest):
            requests_seen += 1
            if requests_seen > 1:
                break
        else:
            events.append(event)
    return events


def _start_files(record: ReplayRecord, events: list[FileEvent | ShellCommand]) -> tuple[dict[str, str], set[str]]:
    """Files the session found (first event a read, content as read) and paths it created."""
    found: dict[str, str] = {}
    first_seen: set[str] = set()
    created: set[str] = set()
    for event in events:
        if not isinstance(event, FileEvent) or not event.applied or event.path in first_seen:
            continue
        first_seen.add(event.path)
        if event.action in _READ_ACTIONS:
            if event.content_hash:
                found[event.path] = record.content(event.content_hash)
        else:
            created.add(event.path)
    return found, created


def _covered_test_modules(snapshot: dict[str, str], tool: str, targets: list[str], cwd: str) -> list[str]:
    """The test modules a pytest or unittest run over ``snapshot`` collects."""
    globs = (UNITTEST_MODULE_GLOB,) if tool == "unittest" else PYTHON_TEST_MODULE_GLOBS
    modules = [path for path in snapshot if any(fnmatchcase(PurePosixPath(path).name, glob) for glob in globs)]
    if tool == "pytest" and targets:
        roots = [posixpath.normpath(posixpath.join(cwd, target.split("::", 1)[0])) for target in targets]
        modules = [
            path
            for path in modules
            if any(path == root or path.startswith(root + "/") or root == "." for root in roots)
        ]
    elif cwd:
        modules = [path for path in modules if path.startswith(cwd + "/")]
    return sorted(path for path in modules if is_test_path(path))


def _session_tests(
    record: ReplayRecord, events: list[FileEvent | ShellCommand], end_files: dict[str, str]
) -> list[str]:
    passed_unchanged: set[str] = set()
    edited_after_failing: set[str] = set()
    for event in events:
        if not isinstance(event, ShellCommand) or event.cwd is None:
            continue
        snapshot = record.files_before(event.command_index)
        check = recognise_check(event.command, snapshot, cwd=event.cwd)
        if check is None or check.tool not in ("pytest", "unittest"):
            continue
        modules = _covered_test_modules(snapshot, check.tool, check.targets, event.cwd)
        result = parse_check_result(check, event.output, event.exit_code)
        for path in modules:
            unchanged = end_files.get(path) == snapshot[path]
            if result.passed and unchanged:
                passed_unchanged.add(path)
            elif result.failed and not unchanged:
                edited_after_failing.add(path)
    return sorted(passed_unchanged - edited_after_failing)


def mine_build_candidates(record: ReplayRecord, partition_key: str) -> list[MinedCandidate[BuildCandidate]]:
    requests = list(record.user_requests())
    if not requests:
        return []
    events = _first_request_events(record)
    start, created = _start_files(record, events)
    end_files, lost = _project_end(record, requests)
    if not created & (set(end_files) | lost):
        return []
    left_out = sorted(path for path in lost if not project_needs(path))
    candidate = BuildCandidate(
        task_id=build_task_id(partition_key),
        request=requests[0].text,
        timestamp=requests[0].timestamp,
        start_files={path: text for path, text in start.items() if path not in created and path not in left_out},
        reference_files=end_files,
        session_tests=_session_tests(record, events, end_files),
        left_out_files=left_out,
    )
    sources = candidate.python_sources()
    facts: dict[str, Fact] = {
        "reference_files": len(end_files),
        "python_sources": sorted(sources),
        "session_tests": candidate.session_tests,
        "left_out_files": left_out,
    }

    def mined(reason: str | None = None, detail: str = "") -> list[MinedCandidate[BuildCandidate]]:
        drop = Drop(reason=reason, detail=detail) if reason else None
        return [MinedCandidate[BuildCandidate](task_id=candidate.task_id, candidate=candidate, drop=drop, facts=facts)]

    lost_needed = sorted(lost - set(left_out))
    if not sources and not any(path.endswith(".py") for path in lost_needed):
        return mined("not_python", "the first request built no Python source file")
    if lost_needed:
        return mined(
            "reference_files_lost", f"not known in full when the first request ended: {', '.join(lost_needed)}"
        )
    existing = sorted(path for path in sources if path in candidate.start_files)
    if existing:
        return mined("project_not_created", f"these Python files existed before the session: {', '.join(existing)}")
    return mined()

"""What a family hands the writer: one candidate, described independently of Harbor.

Paths in ``project_files``, ``solution_files``, ``test_files`` and ``config_paths`` are
relative to the project root, which is ``/workspace`` in every container.

A task is verified either by tests (``tests``: project tasks) or by grading one answer
file (``answer``: qa tasks, whose agent works in ``/workdir`` and writes ``ANSWER_FILE``).
``build_files`` are host files the image gets at build time, checked by sha256.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from traj2env_assets.conventions import (
    LINT_HARNESS_FILES,
    NODE_BASE_IMAGE,
    NODE_HARNESS_FILES,
    PYTHON_BASE_IMAGE,
    PYTHON_HARNESS_FILES,
    is_test_path,
    restored_root,
)
from traj2env_assets.gate.model import BehaviourGate
from traj2env_assets.quality.effort import SessionEffort
from traj2env_assets.repositories.models import RepositoryMetadata

BaseImageKind = Literal["python", "node"]
# "lint": a lint, type or build check (ruff, mypy, tsc, eslint, biome, esbuild) whose pass is the reward; "jest",
# "mocha" and "vitest": the project's tests, outcomes from the runner's own reporter events.
TestRunner = Literal["pytest", "node", "jest", "mocha", "vitest", "lint"]
# The runners of JavaScript tests (Node's harness files, node_modules from the image).
NODE_TEST_RUNNERS: frozenset[TestRunner] = frozenset({"node", "jest", "mocha", "vitest"})
RewardMode = Literal["all_pass", "fraction", "check", "split"]

BASE_IMAGES: dict[BaseImageKind, str] = {"python": PYTHON_BASE_IMAGE, "node": NODE_BASE_IMAGE}
WORKSPACE = "/workspace"
ANSWER_WORKDIR = "/workdir"
ANSWER_FILE = f"{ANSWER_WORKDIR}/answer.txt"
AnswerKind = Literal["number", "label", "yes_no", "list"]
# task.toml's ``tests_from`` for a task whose tests are the session's final version of the
# test files its recorded change also edited (SWE-bench style), not the ones it started with.
TESTS_FROM_SESSION_FINAL = "session_final"

# Build checks whose failure an import names (esbuild's "Could not resolve", "No matching
# export"): dropping the import would pass, so the fix must keep every import of a
# diagnosed file (the tamper check's ``--imports-kept``, the ``lint_drop_imports`` control).
IMPORTS_KEPT_TOOLS = frozenset({"esbuild"})
# Installed JavaScript packages live inside the project; the pristine ones always return.
NODE_MODULES = "node_modules"
# Installed Python packages inside the project: these folders and every virtualenv (a
# folder holding ``pyvenv.cfg``); the verifier deletes them, the pristine ones return.
PYTHON_ENVIRONMENT_DIRS = ("site-packages", "dist-packages", "__pypackages__")


def harness_files(runner: TestRunner) -> frozenset[str]:
    """The file names a runner's harness reads on its own (restored from the pristine image)."""
    return {
        "pytest": PYTHON_HARNESS_FILES,
        "node": NODE_HARNESS_FILES,
        "jest": NODE_HARNESS_FILES,
        "mocha": NODE_HARNESS_FILES,
        "vitest": NODE_HARNESS_FILES,
        "lint": LINT_HARNESS_FILES,
    }[runner]


def _checked_relative(path: str) -> str:
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts or path != pure.as_posix():
        raise ValueError(f"{path!r} must be a normalised path relative to the project root")
    return path


class VerifierSpec(BaseModel):
    """How the verifier decides the reward."""

    model_config = ConfigDict(extra="forbid")

    runner: TestRunner
    # pytest node ids (``tests/test_x.py::test_y``; a bare test file path tracks the whole
    # file: it must collect, and every test in it pass) or node:test ids
    # (``test/a.test.js::name``).
    tracked_test_ids: list[str] = Field(min_length=1)
    # Restored over the submission before the run: tracked and hidden test files.
    test_files: dict[str, str] = Field(default_factory=dict)
    # Restored from the pristine image: conftest.py, pytest.ini, package.json, tsconfig...
    # Harness files found among the project files are added automatically.
    config_paths: list[str] = Field(default_factory=list)
    # The restored file pytest reads its configuration from (``-c``); None = an empty one.
    pytest_config: str | None = None
    # What the recorded check runs besides the tracked tests: pytest paths or node ids,
    # or node test files ("." = the whole project). Required by reward mode ``check``,
    # where every test in the run must pass and the tracked ones must be among them.
    run_targets: list[str] = Field(default_factory=list)
    # Mode ``split`` (SWE-bench style): tests that already passed before the change; the
    # reward is the share of tracked (new) tests passed, 0 when any of these does not pass.
    gate_test_ids: list[str] = Field(default_factory=list)
    reward: RewardMode = "all_pass"
    timeout_sec: int = 300
    # Runner "lint": the check's words as the verifier runs them (``python3 -I -m ruff
    # check .``) in ``check_dir`` (relative to the project root); ``tracked_test_ids``
    # are then the recorded diagnostics (``file: RULE message``). Runner "vitest": the
    # folder whose node_modules holds the project's vitest (the check's own).
    check_command: list[str] = Field(default_factory=list)
    check_dir: str = ""
    # Runner "pytest": the behaviour gate calibration found (traj2env_assets.gate); a test
    # it covers passes only when the gate's worker answers its calls as the reference did.
    behaviour_gate: BehaviourGate | None = None
    # Runner "pytest": project directories (relative to the root) the recorded check had on
    # sys.path (its PYTHONPATH entries, its directory under ``python -m``); the verifier's
    # runner puts them first on sys.path, before the project root it always adds.
    import_paths: list[str] = Field(default_factory=list)
    # Runner "pytest": tests of the run deselected (``--deselect``) because the image fails
    # them with the reference too; no submission is graded on them.
    deselected_test_ids: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _lint_has_command(self) -> VerifierSpec:
        if (self.runner == "lint") != bool(self.check_command):
            raise ValueError("check_command is given exactly when the runner is 'lint'")
        if self.check_dir:
            _checked_relative(self.check_dir)
        return self

    @model_validator(mode="after")
    def _gate_only_when_split(self) -> VerifierSpec:
        if self.gate_test_ids and self.reward != "split":
            raise ValueError("gate_test_ids are given only when reward is 'split'")
        if self.reward == "split" and self.runner != "pytest":
            raise ValueError("reward 'split' is a pytest mode")
        if set(self.gate_test_ids) & set(self.tracked_test_ids):
            raise ValueError("a test is either tracked (new) or a gate (existing), not both")
        return self

    @model_validator(mode="after")
    def _check_mode_has_targets(self) -> VerifierSpec:
        if (self.reward == "check") != bool(self.run_targets):
            raise ValueError("run_targets are given exactly when reward is 'check'")
        return self

    @field_validator("run_targets")
    @classmethod
    def _relative_targets(cls, value: list[str]) -> list[str]:
        for target in value:
            if target != ".":
                _checked_relative(target.split("::", 1)[0])
        return value

    @field_validator("import_paths")
    @classmethod
    def _relative_import_paths(cls, value: list[str]) -> list[str]:
        for path in value:
            if ":" in _checked_relative(path):
                raise ValueError(f"import path {path!r} must not hold ':'")
        return value

    @field_validator("config_paths")
    @classmethod
    def _relative_paths(cls, value: list[str]) -> list[str]:
        return [_checked_relative(path) for path in value]

    @field_validator("test_files")
    @classmethod
    def _relative_keys(cls, value: dict[str, str]) -> dict[str, str]:
        return {_checked_relative(path): content for path, content in value.items()}


class AnswerSpec(BaseModel):
    """A qa task's verifier: ``ANSWER_FILE`` graded against the gold answer
    (``verifier_files/grade_answer.py``); reward 1 or 0."""

    model_config = ConfigDict(extra="forbid")

    kind: AnswerKind
    gold: str = Field(min_length=1)


class BuildFile(BaseModel):
    """A host file copied into the build context at ``context_path`` (relative to
    ``environment/``); the Dockerfile checks its sha256 before using it."""

    model_config = ConfigDict(extra="forbid")

    source: Path
    context_path: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @field_validator("context_path")
    @classmethod
    def _relative_context_path(cls, value: str) -> str:
        return _checked_relative(value)


class TaskSpec(BaseModel):
    """One candidate task: the project as the agent starts, the fix, and the check."""

    model_config = ConfigDict(extra="forbid")

    family: str
    task_id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    org: str = "traj2env"
    instruction: str = Field(min_length=1)
    base_image: BaseImageKind
    # Overrides the public default for ``base_image`` (e.g. a pinned digest).
    base_image_name: str | None = None
    # Dockerfile lines between FROM and the project files, e.g. ``RUN pip install x==1``.
    dependency_lines: list[str] = Field(default_factory=list)
    # Host files put in the build context beside the Dockerfile for ``dependency_lines``
    # (e.g. ``wheels/attrs-25.4.0-py3-none-any.whl``): context path -> absolute host path.
    context_files: dict[str, str] = Field(default_factory=dict)
    project_files: dict[str, bytes]
    solution_files: dict[str, bytes]
    solution_deleted: list[str] = Field(default_factory=list)
    tests: VerifierSpec | None = None
    answer: AnswerSpec | None = None
    build_files: list[BuildFile] = Field(default_factory=list)
    source_trace: str
    source_model: str | None = None
    tags: list[str] = Field(default_factory=list)
    # Non-empty: the recorded change also edited these test files and the task's tests are
    # the session's final version of them (``TESTS_FROM_SESSION_FINAL``).
    tests_changed_by_fix: list[str] = Field(default_factory=list)
    # Existing tests calibration left out of the regression set: they fail before and after
    # the change in the image (a file the replay never saw, a missing tool), not its doing.
    existing_tests_left_out: list[str] = Field(default_factory=list)
    repository: RepositoryMetadata | None = None
    project: str | None = None
    """The session's project (its directory's name): near-duplicates and caps are per project."""
    session_effort: SessionEffort | None = None
    """How hard the session found the change (``traj2env_assets.quality.effort``); None: unknown."""
    agent_timeout_sec: int = 1800
    verifier_timeout_sec: int = 600
    build_timeout_sec: int = 900
    memory_mb: int = 4096

    @field_validator("project_files", "solution_files")
    @classmethod
    def _relative_file_keys(cls, value: dict[str, bytes]) -> dict[str, bytes]:
        return {_checked_relative(path): content for path, content in value.items()}

    @field_validator("context_files")
    @classmethod
    def _context_paths(cls, value: dict[str, str]) -> dict[str, str]:
        for path, source in value.items():
            if _checked_relative(path).split("/", 1)[0] in ("workspace", "Dockerfile"):
                raise ValueError(f"context file {path!r} would replace the project or the Dockerfile")
            if not PurePosixPath(source).is_absolute():
                raise ValueError(f"context file source {source!r} must be an absolute host path")
        return value

    @field_validator("solution_deleted")
    @classmethod
    def _relative_deleted(cls, value: list[str]) -> list[str]:
        return [_checked_relative(path) for path in value]

    @model_validator(mode="after")
    def _one_verifier(self) -> TaskSpec:
        if (self.tests is None) == (self.answer is None):
            raise ValueError("a task is verified by tests or by an answer file, exactly one of them")
        return self

    @model_validator(mode="after")
    def _pytest_config_is_restored(self) -> TaskSpec:
        config = self.tests.pytest_config if self.tests else None
        if config is not None and config not in self.project_files:
            raise ValueError(f"pytest_config {config!r} must be one of the project's files")
        return self

    @model_validator(mode="after")
    def _solution_is_not_restored(self) -> TaskSpec:
        restored = self.pristine_paths()
        clashing = sorted(
            path
            for path in [*self.solution_files, *self.solution_deleted]
            if any(path == root or path.startswith(root + "/") for root in restored)
        )
        if clashing:
            raise ValueError(f"the solution changes files the verifier restores from the pristine image: {clashing}")
        return self

    def test_verifier(self) -> VerifierSpec:
        """``tests``, for a task verified by tests (every task but an answer-file one)."""
        if self.tests is None:
            raise ValueError(f"task {self.task_id} is verified by an answer file, not by tests")
        return self.tests

    @property
    def workdir(self) -> str:
        return ANSWER_WORKDIR if self.answer else WORKSPACE

    @property
    def submission_path(self) -> str:
        """What crosses from the agent's container into the verifier."""
        return ANSWER_FILE if self.answer else WORKSPACE

    @property
    def image_name(self) -> str:
        return self.base_image_name or BASE_IMAGES[self.base_image]

    def pristine_paths(self) -> list[str]:
        """Paths the verifier restores from the pristine image (files or whole directories):
        the given config paths, harness files, every test path and the tracked test files.
        A lint check restores only its configuration: its fix may edit any code, tests too."""
        if self.tests is None:
            return []
        names = harness_files(self.tests.runner)
        found = {path for path in self.project_files if PurePosixPath(path).name in names}
        if self.tests.runner == "lint":
            paths = set(self.tests.config_paths) | found
            return sorted(path for path in paths if not any(path.startswith(other + "/") for other in paths))
        tests = {restored_root(path) for path in self.project_files if is_test_path(path)}
        tracked = {test_id.split("::", 1)[0] for test_id in self.tests.tracked_test_ids}
        tracked &= set(self.project_files)
        paths = set(self.tests.config_paths) | found | tests | tracked
        # A path inside a restored folder comes back with it.
        return sorted(path for path in paths if not any(path.startswith(other + "/") for other in paths))

"""The ``task.toml`` we write, as pydantic models, and a TOML emitter for its shape.

Field names follow Harbor 0.25's and 0.26's ``TaskConfig`` (``harbor.models.task.config``); the
tests validate every emitted file with Harbor's own model and ``harbor lint``. Harbor
ignores unknown keys at run time, so the models forbid extras to catch typos here.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from traj2env_assets.quality.effort import SessionEffort
from traj2env_assets.repositories.models import RepositoryMetadata

SCHEMA_VERSION = "1.4"
PIPELINE_NAME = "traj2env"

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Reproducibility(_Strict):
    mode: Literal["inline_dockerfile"] = "inline_dockerfile"


class Evaluation(_Strict):
    label: Literal["unverified", "verified"] = "unverified"


class Repo2EnvSection(_Strict):
    """``[metadata.repo2env]``, named and shaped as the product notes say, so tools that read
    Repo2RLEnv-style tasks find the pipeline, recipe, reward kinds and evaluation label."""

    pipeline: str = PIPELINE_NAME
    recipe: Literal["trajectory_replay"] = "trajectory_replay"
    reward_kinds: list[str] = Field(default_factory=lambda: ["test_execution"])
    reproducibility: Reproducibility = Field(default_factory=Reproducibility)
    evaluation: Evaluation = Field(default_factory=Evaluation)


class BehaviourGateMetadata(_Strict):
    """What the behaviour gate decides (``traj2env_assets.gate``): ``coverage`` is the share of
    tracked tests whose outcome it decides; the others are judged in-process only."""

    coverage: float = Field(ge=0, le=1)
    tracked_tests: int
    covered_tests: int
    cases: int
    generalisation_cases: int


class TaskMetadata(_Strict):
    family: str
    source_trace: str
    source_model: str | None = None
    category: str = "software_engineering"
    difficulty: Literal["easy", "medium", "hard", "unknown"] = "unknown"
    tags: list[str] = Field(default_factory=list)
    behaviour_gate: BehaviourGateMetadata | None = None
    # "session_final": the tests are the session's final version of the test files the
    # recorded change also edited (listed in tests_changed_by_fix).
    tests_from: str | None = None
    tests_changed_by_fix: list[str] | None = None
    session_effort: SessionEffort | None = None
    """What ``difficulty`` is read from: the session's effort between the task's start and its change."""
    # Existing tests that fail before and after the change in the image, so not its doing:
    # left out of the regression set the verifier runs.
    existing_tests_left_out: list[str] | None = None
    repository: RepositoryMetadata | None = None
    project: str | None = None
    """The session's project (its directory's name, or its repository's)."""
    """The local checkout and commit the session's project was rebuilt from, when one was used."""
    repo2env: Repo2EnvSection = Field(default_factory=Repo2EnvSection)


class PackageSection(_Strict):
    name: str = Field(pattern=r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$")
    description: str = ""


class AgentSection(_Strict):
    timeout_sec: float


class VerifierSection(_Strict):
    timeout_sec: float
    # test.sh restores configuration and drops to the unprivileged test user itself.
    user: Literal["root"] = "root"
    environment_mode: Literal["separate"] = "separate"
    network_mode: Literal["no-network"] = "no-network"


class EnvironmentSection(_Strict):
    build_timeout_sec: float
    network_mode: Literal["no-network"] = "no-network"
    workdir: str = "/workspace"
    memory_mb: int | None = None


class TaskToml(_Strict):
    schema_version: str = SCHEMA_VERSION
    source: str = PIPELINE_NAME
    artifacts: list[str]
    task: PackageSection
    metadata: TaskMetadata
    agent: AgentSection
    verifier: VerifierSection
    environment: EnvironmentSection

    def to_toml(self) -> str:
        return dumps_toml(self.model_dump(mode="json", exclude_none=True))


def dumps_toml(document: dict[str, Any]) -> str:
    """TOML for nested dicts of strings, numbers, booleans and lists of those."""
    lines: list[str] = []
    _emit_table(document, [], lines)
    return "\n".join(lines).strip() + "\n"


def _emit_table(table: dict[str, Any], path: list[str], lines: list[str]) -> None:
    scalars = {key: value for key, value in table.items() if not isinstance(value, dict)}
    tables = {key: value for key, value in table.items() if isinstance(value, dict)}
    if path and (scalars or not tables):
        lines.append(f"\n[{'.'.join(_key(part) for part in path)}]")
    for key, value in scalars.items():
        lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in tables.items():
        _emit_table(value, [*path, key], lines)


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        # A JSON string literal is a valid TOML basic string for every code point.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")

"""``tasks.json``: what the harness needs to know about each exported task."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class HarnessTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    family: str
    source_trace: str
    split: Literal["train", "test"]
    agent_timeout_sec: float = Field(gt=0)
    verifier_timeout_sec: float = Field(gt=0)
    build_timeout_sec: float = Field(gt=0)
    memory_mb: int | None = None
    workdir: str
    submission_path: str
    """What the agent hands to the verifier (the task's Harbor ``artifacts`` entry)."""
    base_images: list[str] = Field(default_factory=list)
    reward_min: float = 0.0
    reward_max: float = 1.0
    """The family's native reward scale (binary 1/0, or a fraction of tests passed)."""


class TaskIndex(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tasks: dict[str, HarnessTask]
    """Per task id."""
    base_image_archives: dict[str, str] = Field(default_factory=dict)
    """Image name → archive file name under ``base-images/``."""

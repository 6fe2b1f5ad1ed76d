"""Accumulates steps from a native log and emits a validated ATIF-v1.7 trajectory.

Every converter feeds the same builder, so de-duplication of repeated history
(the same tool-call id twice), result-to-call pairing and ATIF's structural rules
live in one place.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import atif

from traj2env_assets.formats.jsonl import LineStats

SCHEMA_VERSION = "ATIF-v1.7"
StepSource = Literal["system", "user", "agent"]


def valid_timestamp(value: object) -> str | None:
    """Return ``value`` if ATIF accepts it as a timestamp, else None (absent, not guessed)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value


def reasoning_effort_or_none(value: object) -> str | float | None:
    """ATIF's effort is a label or a number; anything else in a log is absent, not an error."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def drop_none(mapping: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in mapping.items() if value is not None}


@dataclass(slots=True)
class _Result:
    call_id: str | None
    content: str
    extra: dict[str, Any]
    subagent_ids: list[str] = field(default_factory=list)


@dataclass(slots=True)
class PendingStep:
    """A step as a converter collects it; ``build()`` turns each into an ATIF step."""

    source: StepSource
    message: str
    timestamp: str | None = None
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    reasoning_content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    results: list[_Result] = field(default_factory=list)
    metrics: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class TrajectoryBuilder:
    """Collects steps in order; ``build()`` validates them as ATIF."""

    def __init__(self) -> None:
        self._steps: list[PendingStep] = []
        self._call_owner: dict[str, PendingStep] = {}
        self._answered: set[str] = set()
        self.duplicate_tool_calls = 0
        self.orphan_results = 0
        self.subagents: list[atif.Trajectory] = []

    @property
    def steps(self) -> int:
        return len(self._steps)

    def add_message(
        self,
        source: StepSource,
        message: str,
        timestamp: object = None,
        extra: dict[str, Any] | None = None,
    ) -> PendingStep:
        step = PendingStep(source=source, message=message, timestamp=valid_timestamp(timestamp))
        if extra:
            step.extra.update(extra)
        self._steps.append(step)
        return step

    def add_agent_step(
        self,
        message: str = "",
        timestamp: object = None,
        model_name: object = None,
        reasoning_content: str | None = None,
        reasoning_effort: object = None,
    ) -> PendingStep:
        """An agent step; a model name or effort of the wrong type (a mangled line) is left out."""
        step = PendingStep(
            "agent",
            message,
            valid_timestamp(timestamp),
            model_name if isinstance(model_name, str) and model_name else None,
            reasoning_effort_or_none(reasoning_effort),
            reasoning_content or None,
        )
        self._steps.append(step)
        return step

    def answering_model(self) -> str | None:
        """The model named on most agent steps (the first such on a tie): the one that answered."""
        counts = Counter(step.model_name for step in self._steps if step.source == "agent" and step.model_name)
        return counts.most_common(1)[0][0] if counts else None

    def last_agent_step(self) -> PendingStep | None:
        for step in reversed(self._steps):
            if step.source == "agent":
                return step
        return None

    def add_tool_call(
        self,
        step: PendingStep,
        call_id: str,
        function_name: str,
        arguments: object,
        extra: dict[str, Any] | None = None,
    ) -> bool:
        """Attach a call to ``step``; a call id seen before is repeated history and is dropped."""
        if call_id in self._call_owner:
            self.duplicate_tool_calls += 1
            return False
        if not isinstance(arguments, dict):
            arguments = {"raw": arguments}
        call: dict[str, Any] = {"tool_call_id": call_id, "function_name": function_name, "arguments": arguments}
        call_extra = drop_none(extra or {})
        if call_extra:
            call["extra"] = call_extra
        step.tool_calls.append(call)
        self._call_owner[call_id] = step
        return True

    def add_tool_result(
        self,
        call_id: str,
        content: str,
        extra: dict[str, Any] | None = None,
        subagent_ids: list[str] | None = None,
    ) -> bool:
        """Attach a result to the step that made the call (ATIF requires the same step)."""
        owner = self._call_owner.get(call_id)
        if owner is None:
            self.orphan_results += 1
            return False
        if call_id in self._answered:
            return False
        self._answered.add(call_id)
        owner.results.append(_Result(call_id, content, drop_none(extra or {}), list(subagent_ids or [])))
        return True

    def add_observation(self, step: PendingStep, content: str, extra: dict[str, Any] | None = None) -> None:
        """A result that answers no tool call (e.g. a command the user ran themselves)."""
        step.results.append(_Result(None, content, drop_none(extra or {})))

    def drop_empty_agent_steps(self) -> None:
        self._steps = [
            step
            for step in self._steps
            if not (
                step.source == "agent"
                and not step.message
                and not step.tool_calls
                and not step.reasoning_content
                and step.metrics is None
            )
        ]

    def build(
        self,
        agent: dict[str, Any],
        session_id: str | None,
        extra: dict[str, Any],
        trajectory_id: str | None = None,
    ) -> atif.Trajectory:
        """Validate the whole document in one pass through the ATIF models."""
        self.drop_empty_agent_steps()
        document = drop_none(
            {
                "schema_version": SCHEMA_VERSION,
                "session_id": session_id,
                "trajectory_id": trajectory_id,
                "agent": drop_none(agent),
                "steps": [_step_dict(index, step) for index, step in enumerate(self._steps, start=1)],
                "extra": drop_none(extra) or None,
                "subagent_trajectories": [sub.model_dump(mode="json", exclude_none=True) for sub in self.subagents]
                or None,
            }
        )
        return atif.Trajectory.model_validate(document)


def _result_dict(result: _Result) -> dict[str, Any]:
    out: dict[str, Any] = {"source_call_id": result.call_id, "content": result.content}
    if result.extra:
        out["extra"] = result.extra
    if result.subagent_ids:
        out["subagent_trajectory_ref"] = [{"trajectory_id": ref} for ref in result.subagent_ids]
    return out


def _step_dict(step_id: int, step: PendingStep) -> dict[str, Any]:
    out: dict[str, Any] = {"step_id": step_id, "source": step.source, "message": step.message}
    if step.timestamp is not None:
        out["timestamp"] = step.timestamp
    if step.results:
        out["observation"] = {"results": [_result_dict(result) for result in step.results]}
    if step.extra:
        out["extra"] = step.extra
    if step.source == "agent":
        if step.model_name is not None:
            out["model_name"] = step.model_name
        if step.reasoning_effort is not None:
            out["reasoning_effort"] = step.reasoning_effort
        if step.reasoning_content is not None:
            out["reasoning_content"] = step.reasoning_content
        if step.tool_calls:
            out["tool_calls"] = step.tool_calls
        if step.metrics is not None:
            out["metrics"] = step.metrics
    return out


def line_stats_extra(stats: LineStats, builder: TrajectoryBuilder) -> dict[str, Any]:
    """The skip counters every converter records in ``Trajectory.extra``."""
    return {
        "skipped_lines": stats.skipped_lines or None,
        "unknown_line_types": sum(stats.unknown_line_types.values()) or None,
        "duplicate_tool_calls": builder.duplicate_tool_calls or None,
        "orphan_tool_results": builder.orphan_results or None,
    }

"""Why a candidate goes no further, and the facts recorded about it: the words every stage,
family and check shares (a ground module: it imports nothing of the package)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Fact = str | int | float | bool | list[str]
"""A value shown in a candidate's row of the Dagster tables and in report.json."""


class Drop(BaseModel):
    """Why a candidate goes no further: an exact reason string (see docs/family-*.md) and a detail for people."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str
    detail: str = ""

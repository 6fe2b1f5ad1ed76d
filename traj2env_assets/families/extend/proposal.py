"""The ``llm`` proposal: a contract for the change and a pytest module of candidate tests."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ExtendProposal(BaseModel):
    model_config = ConfigDict(extra="forbid")

    contract: str = Field(min_length=1)
    """What the change must provide: public names, signatures and behaviours, in Markdown."""
    test_module: str = Field(min_length=1)
    """One pytest module testing the change, importing the project the way its tests do."""

"""What the model calls of a partition or a whole run added up to, for report.json and Dagster metadata."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field


class LlmUsage(BaseModel):
    """Counters of model use; each outcome carries its own, and sums of them describe a partition or a run.

    ``calls`` counts provider calls that were admitted under the spend cap (a call that
    ended in an error after its retries still counts once); ``cache_hits`` are free.
    ``unpriced_calls`` are calls whose cost neither LiteLLM's price table nor the provider
    reported: they add 0 to ``spend_usd``, so the spend cap cannot bound them.
    """

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    spend_usd: float = 0.0
    unpriced_calls: int = 0
    errors: int = 0
    budget_exhausted: int = 0
    declines: dict[str, int] = Field(default_factory=dict)

    def plus(self, other: LlmUsage) -> LlmUsage:
        return LlmUsage(
            calls=self.calls + other.calls,
            cache_hits=self.cache_hits + other.cache_hits,
            tokens_in=self.tokens_in + other.tokens_in,
            tokens_out=self.tokens_out + other.tokens_out,
            spend_usd=self.spend_usd + other.spend_usd,
            unpriced_calls=self.unpriced_calls + other.unpriced_calls,
            errors=self.errors + other.errors,
            budget_exhausted=self.budget_exhausted + other.budget_exhausted,
            declines=dict(sorted((Counter(self.declines) + Counter(other.declines)).items())),
        )

    @property
    def declined(self) -> int:
        return sum(self.declines.values())

    @classmethod
    def total(cls, usages: Iterable[LlmUsage]) -> LlmUsage:
        result = cls()
        for usage in usages:
            result = result.plus(usage)
        return result

"""The suite's pytest-xdist scheduler: one work unit per test module, some modules merged.

xdist's ``loadgroup`` marks do not reach its scheduler under pytest 9 (it renames
``item._nodeid``, which pytest 9 no longer reads), so grouping is done here on the node
ids the scheduler sees: ``loadscope`` by module instead of by class, with the modules
that share one costly session fixture in a single unit.
"""

from __future__ import annotations

from collections.abc import Set

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScopeScheduling

MERGED_UNIT = "merged"


class ModuleScheduling(LoadScopeScheduling):
    def __init__(self, config: pytest.Config, log: Producer | None, *, merged: Set[str]) -> None:
        super().__init__(config, log)
        self.merged = merged

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::")[0]
        return MERGED_UNIT if module in self.merged else module

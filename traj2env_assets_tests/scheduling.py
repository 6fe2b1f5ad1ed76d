"""The suite's pytest-xdist scheduler: one work unit per test module, some modules merged.

xdist's ``loadgroup`` marks do not reach its scheduler under pytest 9 (it renames
``item._nodeid``, which pytest 9 no longer reads), so grouping is done here on the node
ids the scheduler sees: ``loadscope`` by module instead of by class, with the modules
that share one costly session fixture in a single unit. xdist hands out the units by
their number of tests (``--loadscope-reorder``, on by default) and, among units of one
size, in collection order, which :func:`costly_units_first` sets: the shared units first.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScopeScheduling


class ModuleScheduling(LoadScopeScheduling):
    def __init__(self, config: pytest.Config, log: Producer | None, *, units: Mapping[str, str]) -> None:
        """``units`` names the shared unit of each merged module; any other module is its own."""
        super().__init__(config, log)
        self.units = units

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid, self.units)


def unit_of(nodeid: str, units: Mapping[str, str]) -> str:
    """The work unit of a test: its module's shared unit, or its module."""
    module = nodeid.split("::")[0]
    return units.get(module, module)


def costly_units_first(items: list[pytest.Item], order: list[str], units: Mapping[str, str]) -> None:
    """Reorder ``items`` in place: the shared units' tests first, in ``order``; the rest
    keep their order (a stable sort)."""
    rank = {unit: index for index, unit in enumerate(order)}
    items.sort(key=lambda item: rank.get(unit_of(item.nodeid, units), len(order)))

"""The registered families: one line per family, the only list of them in the code base.

The composition roots (the Dagster definitions, the CLI, the benchmarks) build a
:class:`Families` collection from this list (:func:`registered_families`) and hand it
down; the lifecycle only ever sees the collection or one :class:`Family` from it. So a
new family is its folder plus one line here, and a test runs another family by handing
over a collection that holds it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from traj2env_assets.families.build.family import BuildFamily
from traj2env_assets.families.contract import Family
from traj2env_assets.families.extend.family import ExtendFamily
from traj2env_assets.families.qa.family import QaFamily
from traj2env_assets.families.repair.family import RepairFamily

REGISTERED: tuple[Family, ...] = (RepairFamily(), BuildFamily(), ExtendFamily(), QaFamily())
# Named in the product spec; each becomes an error-free option when its folder lands.
PLANNED_FAMILIES: tuple[str, ...] = ()


class UnknownFamilyError(ValueError):
    """A family name that is not in the collection (or not implemented yet)."""


class Families:
    """The families in play, in order: the registered ones, or those a test hands over."""

    __slots__ = ("_members",)

    def __init__(self, members: Iterable[Family]) -> None:
        self._members = tuple(members)
        names = self.names()
        # Asset names and stored statuses key on the name: two families may not share one.
        if len(set(names)) != len(names):
            raise ValueError(f"two families share a name: {', '.join(names)}")

    def __iter__(self) -> Iterator[Family]:
        return iter(self._members)

    def __repr__(self) -> str:
        return f"Families({', '.join(self.names())})"

    def names(self) -> list[str]:
        return [family.name for family in self._members]

    def by_name(self, name: str) -> Family:
        """The family a stored candidate names; an unknown name is an error naming the known ones."""
        for family in self._members:
            if family.name == name:
                return family
        implemented = ", ".join(self.names())
        if name in PLANNED_FAMILIES:
            raise UnknownFamilyError(f"family {name!r} is not implemented yet; implemented families: {implemented}")
        raise UnknownFamilyError(f"unknown family {name!r}; implemented families: {implemented}")

    def selected(self, names: Sequence[str]) -> Families:
        """The families among ``names``, in this collection's order; an unknown name is an error."""
        wanted = {self.by_name(name).name for name in names}
        return Families(family for family in self._members if family.name in wanted)


def registered_families() -> Families:
    """Every registered family: what a composition root hands down unless told otherwise."""
    return Families(REGISTERED)

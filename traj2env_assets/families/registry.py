"""The registered families: one line per family, the only list of them in the code base.

Everything else (mining assets, the lifecycle, the report, config validation) reads
this tuple, so a new family is its folder plus one line here.
"""

from __future__ import annotations

from collections.abc import Sequence

from traj2env_assets.families.build.family import BuildFamily
from traj2env_assets.families.contract import Family
from traj2env_assets.families.extend.family import ExtendFamily
from traj2env_assets.families.qa.family import QaFamily
from traj2env_assets.families.repair.family import RepairFamily

FAMILIES: tuple[Family, ...] = (RepairFamily(), BuildFamily(), ExtendFamily(), QaFamily())
# Named in the product spec; each becomes an error-free option when its folder lands.
PLANNED_FAMILIES: tuple[str, ...] = ()


class UnknownFamilyError(ValueError):
    """A family name that is not registered (yet)."""


def implemented_names() -> list[str]:
    return [family.name for family in FAMILIES]


def family_named(name: str) -> Family:
    for family in FAMILIES:
        if family.name == name:
            return family
    implemented = ", ".join(implemented_names())
    if name in PLANNED_FAMILIES:
        raise UnknownFamilyError(f"family {name!r} is not implemented yet; implemented families: {implemented}")
    raise UnknownFamilyError(f"unknown family {name!r}; implemented families: {implemented}")


def selected_families(names: Sequence[str]) -> list[Family]:
    """The registered families among ``names``, in registry order; an unknown name is an error."""
    wanted = {family_named(name).name for name in names}
    return [family for family in FAMILIES if family.name in wanted]

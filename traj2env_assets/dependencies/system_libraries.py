"""Debian runtime libraries that some Python wheels load but do not bundle.

The one owner of the mapping from a Python distribution to the Debian packages its shared
objects need at import time: Qt bindings' wheels, for one, link against the system's
``libGL.so.1`` and fail to import without it (``libGL.so.1: cannot open shared object
file``). Task images install them from the Debian mirror during the build.
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

# libglib2.0-0: QtCore links libglib-2.0 and libgthread-2.0 (trixie's apt picks libglib2.0-0t64,
# its only provider; bookworm has the package under this name).
_QT = ("libgl1", "libegl1", "libxkbcommon0", "libfontconfig1", "libdbus-1-3", "libglib2.0-0")
SYSTEM_LIBRARIES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ["pyside6", "pyside6-essentials", "pyside6-addons", "pyside2", "pyqt5", "pyqt5-qt5", "pyqt6", "pyqt6-qt6"], _QT
    ),
}


def system_packages(requirements: Iterable[str]) -> list[str]:
    """The Debian packages the given requirements or pins (``pyside6==6.9.3``) need, sorted."""
    packages: set[str] = set()
    for line in requirements:
        try:
            name = canonicalize_name(Requirement(line).name)
        except InvalidRequirement:
            continue
        packages.update(SYSTEM_LIBRARIES.get(name, ()))
    return sorted(packages)


def system_library_lines(requirements: Iterable[str]) -> list[str]:
    """A Dockerfile RUN line installing those packages, or none when none is needed."""
    packages = system_packages(requirements)
    if not packages:
        return []
    return [
        "RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends "
        + " ".join(packages)
        + " && rm -rf /var/lib/apt/lists/*"
    ]

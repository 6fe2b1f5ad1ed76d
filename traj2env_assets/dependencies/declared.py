"""The Python requirements a project declares, from the files the replay rebuilt.

Read from the project root: ``requirements*.txt`` (following ``-r`` includes),
``pyproject.toml`` ``[project] dependencies`` with the ``test``/``tests``/``testing``/``dev``
optional dependencies and dependency groups, and ``setup.cfg`` ``[options] install_requires``
with the same ``extras_require``. Local paths, editable installs, index options and the
project itself are left out (the project is the workspace; nothing else is reachable).
"""

from __future__ import annotations

import configparser
import posixpath
import re
import tomllib
from collections.abc import Iterable, Mapping

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

TEST_EXTRAS = ("test", "tests", "testing", "dev")
_REQUIREMENTS_FILE = re.compile(r"^requirements[\w.-]*\.txt$")


def _requirement_lines(files: Mapping[str, str], path: str, seen: set[str]) -> list[str]:
    if path in seen or path not in files:
        return []
    seen.add(path)
    lines: list[str] = []
    for raw in files[path].splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        include = re.match(r"^(?:-r|--requirement)[=\s]+(\S+)$", line)
        if include:
            nested = posixpath.normpath(posixpath.join(posixpath.dirname(path), include.group(1)))
            lines += _requirement_lines(files, nested, seen)
        elif not line.startswith("-"):
            lines.append(line)
    return lines


def _pyproject(text: str) -> tuple[str | None, list[str]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None, []
    project = data.get("project", {})
    found = list(project.get("dependencies", []))
    extras = project.get("optional-dependencies", {})
    groups = data.get("dependency-groups", {})
    for name in TEST_EXTRAS:
        found += extras.get(name, [])
        found += [item for item in groups.get(name, []) if isinstance(item, str)]
    return project.get("name"), [item for item in found if isinstance(item, str)]


def _setup_cfg(text: str) -> tuple[str | None, list[str]]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None, []
    found = parser.get("options", "install_requires", fallback="").splitlines()
    for name in TEST_EXTRAS:
        found += parser.get("options.extras_require", name, fallback="").splitlines()
    return parser.get("metadata", "name", fallback=None), found


def _valid(lines: Iterable[str], own_names: set[str]) -> list[str]:
    kept: list[str] = []
    for line in lines:
        try:
            requirement = Requirement(line.strip())
        except InvalidRequirement:
            continue  # a local path, a URL without a name, an option: nothing to resolve
        if requirement.url or canonicalize_name(requirement.name) in own_names:
            continue
        kept.append(str(requirement))
    return list(dict.fromkeys(kept))


def declared_requirements(files: Mapping[str, str]) -> list[str]:
    """PEP 508 requirement strings the project at the root of ``files`` declares."""
    lines: list[str] = []
    own: set[str] = set()
    for path in sorted(p for p in files if "/" not in p and _REQUIREMENTS_FILE.match(p)):
        lines += _requirement_lines(files, path, set())
    for path, read in (("pyproject.toml", _pyproject), ("setup.cfg", _setup_cfg)):
        if path in files:
            name, found = read(files[path])
            lines += found
            if name:
                own.add(canonicalize_name(name))
    return _valid(lines, own)

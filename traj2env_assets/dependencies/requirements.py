"""Dockerfile lines that install a Python project's declared requirements and pytest, pinned
to the trajectory's date with uv's ``--exclude-newer``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

REQUIREMENTS = re.compile(r"^requirements[\w.-]*\.txt$")


def trajectory_date(timestamp: str | None) -> str | None:
    """A recorded timestamp's date (UTC, ``YYYY-MM-DD``), or None: what npm pins to."""
    moment = _utc(timestamp)
    return moment.date().isoformat() if moment else None


def trajectory_time(timestamp: str | None) -> str | None:
    """A recorded timestamp's time (UTC, RFC 3339), or None: what uv pins Python packages to."""
    moment = _utc(timestamp)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def _utc(timestamp: str | None) -> datetime | None:
    if not timestamp:
        return None
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def requirement_files(paths: Iterable[str]) -> list[str]:
    """The project's top-level ``requirements*.txt`` files."""
    return sorted(path for path in paths if "/" not in path and REQUIREMENTS.match(path))


def python_dependency_lines(paths: Iterable[str], date: str | None) -> list[str]:
    """Install pytest and the requirement files among ``paths`` (they must be project files)."""
    # The public python image has no pytest; the offline stand-in has it, so this
    # installs nothing there and a pinned pytest everywhere else.
    pin = f" --exclude-newer {date}" if date else ""
    requirements = requirement_files(paths)
    install = (
        "python3 -m pip install --no-cache-dir --break-system-packages uv && "
        f"uv pip install --system --break-system-packages{pin} pytest"
        + "".join(f" -r /tmp/deps/{path}" for path in requirements)
    )
    if requirements:
        return ["COPY " + " ".join(f"workspace/{path}" for path in requirements) + " /tmp/deps/", f"RUN {install}"]
    return [f'RUN python3 -c "import pytest" 2>/dev/null || ({install})']

"""npm scripts from a package.json text (shared by replay and the check recogniser)."""

from __future__ import annotations

import json


def package_scripts(text: str | None) -> dict[str, str] | None:
    """The ``scripts`` map of a package.json, or None when absent or unreadable."""
    if text is None:
        return None
    try:
        scripts = json.loads(text).get("scripts")
    except (ValueError, AttributeError):
        return None
    if not isinstance(scripts, dict):
        return None
    return {name: body for name, body in scripts.items() if isinstance(body, str)}

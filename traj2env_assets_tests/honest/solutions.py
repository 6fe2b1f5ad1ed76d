"""The honest solutions as data: {session name: {variant: {path in /workspace: file text}}}."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent

# The sample session each task comes from, and its folder here.
SESSION_TASKS: dict[str, str] = {
    "python-pytest-fix": "intervals",
    "python-unittest-fix": "slugify",
    "python-deps-pytest-fix": "events",
    "python-build-package": "romans",
    "python-extend-feature": "numstats",
}


def _variant_files(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def load_solutions() -> dict[str, dict[str, dict[str, str]]]:
    return {
        session: {
            variant.name: _variant_files(variant)
            for variant in sorted((HERE / task).iterdir())
            if variant.is_dir() and variant.name != "__pycache__"
        }
        for session, task in SESSION_TASKS.items()
    }


SOLUTIONS: dict[str, dict[str, dict[str, str]]] = load_solutions()

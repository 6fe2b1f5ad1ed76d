"""Near-duplicate tasks: tasks of one project whose change, tests and instruction overlap.

Exact copies of one piece of work never become two tasks (``duplicates``). Near-duplicates
do: two sessions that fixed the same bug in slightly different ways, a resumed session
that redid part of its parent's work. They are grouped so that a group is never split
between train and test (a model would be tested on what it trained on) and so that the
per-group cap can keep a dataset from filling with variations of one fix.

A task's features are what it asks and what it takes: the lines its reference solution
adds or removes (not the whole files, or two fixes in one file would look alike), the test
ids it tracks, and word 3-grams of its instruction. Two tasks of one project are
near-duplicates when the Jaccard similarity of their features is at least
:data:`NEAR_DUPLICATE_JACCARD`, estimated with MinHash and found with an LSH index
(``datasketch``) so a large dataset is not compared pair by pair. Groups are the
connected components of that relation, named by their smallest task id.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from traj2env_assets.layout import TaskLayout

if TYPE_CHECKING:
    from datasketch import MinHash

NUM_PERM = 128
NEAR_DUPLICATE_JACCARD = 0.6
_WORD = re.compile(r"\w+")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _changed_lines(task_dir: Path) -> set[str]:
    layout = TaskLayout(task_dir)
    solution = layout.solution_files_dir
    lines: set[str] = set()
    for path in sorted(p for p in solution.rglob("*") if p.is_file()) if solution.is_dir() else []:
        relative = path.relative_to(solution).as_posix()
        before = _read(layout.shown_workspace_dir / relative).splitlines()
        for line in difflib.unified_diff(before, _read(path).splitlines(), lineterm="", n=0):
            if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip():
                lines.add(f"change:{relative}:{line[0]}{line[1:].strip()}")
    return lines


def task_features(task_dir: Path) -> set[str]:
    layout = TaskLayout(task_dir)
    words = _WORD.findall(_read(layout.instruction_path).lower())
    features = {f"text:{' '.join(words[i : i + 3])}" for i in range(max(len(words) - 2, 0))}
    features |= {f"test:{line.strip()}" for line in _read(layout.tracked_ids_path).splitlines() if line.strip()}
    restored = layout.restore_dir
    if restored.is_dir():
        features |= {f"test-file:{p.relative_to(restored).as_posix()}" for p in restored.rglob("*") if p.is_file()}
    return features | _changed_lines(task_dir)


def task_signature(task_dir: Path) -> MinHash:
    # datasketch loads scipy, a second of every CLI start: loaded when a task is signed.
    from datasketch import MinHash

    signature = MinHash(num_perm=NUM_PERM)
    signature.update_batch([feature.encode() for feature in sorted(task_features(task_dir))])
    return signature


def near_duplicate_groups(tasks: Mapping[str, tuple[str, MinHash]]) -> dict[str, str]:
    """Task id → its group's name (the group's smallest task id); ``tasks`` maps each task id
    to its project and signature. Only tasks of one project are compared."""
    from datasketch import MinHashLSH

    parent = {task_id: task_id for task_id in tasks}

    def root(task_id: str) -> str:
        while parent[task_id] != task_id:
            parent[task_id] = parent[parent[task_id]]
            task_id = parent[task_id]
        return task_id

    by_project: dict[str, list[str]] = defaultdict(list)
    for task_id, (project, _) in sorted(tasks.items()):
        by_project[project].append(task_id)
    for members in by_project.values():
        index = MinHashLSH(threshold=NEAR_DUPLICATE_JACCARD, num_perm=NUM_PERM)
        for task_id in members:
            index.insert(task_id, tasks[task_id][1])
        for task_id in members:
            signature = tasks[task_id][1]
            for other in index.query(signature):
                # LSH proposes pairs; the estimate decides.
                if other != task_id and signature.jaccard(tasks[other][1]) >= NEAR_DUPLICATE_JACCARD:
                    first, second = sorted((root(task_id), root(other)))
                    parent[second] = first
    return {task_id: root(task_id) for task_id in tasks}

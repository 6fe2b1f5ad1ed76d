"""The verifier phase, shared by the trial matrix and the Trajectory harness.

A fresh container from the pristine task image gets the submission in place of its
submission path and the task's ``tests/`` at ``/tests``; ``tests/test.sh`` writes
``/logs/verifier/reward.txt``, which is read back. No reward file, or one that is not
a number, is ``reward=None``: there is no valid grade.
"""

from __future__ import annotations

import json
import math
from pathlib import Path, PurePosixPath
from typing import IO, Any

from docker.models.containers import Container
from pydantic import BaseModel

from traj2env_assets.docker_engine.sandbox import ExecOutcome, exec_with_deadline, put_directory, read_directory

LOGS_DIR = "/logs/verifier"
STAGING_DIR = "/tmp"
OUTPUT_TAIL_CHARS = 4000


class VerifierRun(BaseModel):
    outcome: ExecOutcome
    reward: float | None
    verdict: dict[str, Any] | None
    output_tail: str
    logs: dict[str, bytes]
    """Every file the verifier left in /logs/verifier, by name."""


def run_verifier(
    box: Container,
    tests_dir: Path,
    submission_path: str,
    submission: IO[bytes],
    *,
    timeout_s: float,
    disk_bytes: int | None = None,
) -> VerifierRun:
    target = PurePosixPath(submission_path)
    # The submission tar holds the submission's basename at its top: stage it in /tmp.
    box.put_archive(STAGING_DIR, submission)
    put_directory(box, tests_dir, "/tests")
    staged = f"{STAGING_DIR}/{target.name}"
    # A missing submission (an agent that wrote no answer file) leaves the path empty.
    outcome = exec_with_deadline(
        box,
        f"rm -rf {target} && mkdir -p {target.parent} {LOGS_DIR} && "
        f"{{ [ ! -e {staged} ] || mv {staged} {target}; }} && "
        "chmod +x /tests/test.sh && /tests/test.sh",
        timeout_s=timeout_s,
        workdir="/",
        disk_bytes=disk_bytes,
    )
    logs = read_directory(box, LOGS_DIR)
    verdict = logs.get("verdict.json")
    output = logs.get("test-output.txt", b"").decode("utf-8", "replace")
    return VerifierRun(
        outcome=outcome,
        reward=None if outcome.timed_out else parse_reward(logs.get("reward.txt")),
        verdict=_json_or_none(verdict),
        output_tail=output[-OUTPUT_TAIL_CHARS:],
        logs=logs,
    )


def parse_reward(raw: bytes | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw.decode().strip())
    except (UnicodeDecodeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _json_or_none(raw: bytes | None) -> dict[str, Any] | None:
    if not raw:
        return None
    try:
        loaded = json.loads(raw)
    except ValueError:
        return None
    return loaded if isinstance(loaded, dict) else None

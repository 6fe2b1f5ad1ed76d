"""A session on an existing repository, end to end with the real Docker engine and Harbor.

The session (made here from the bundled pi repair sample) fixes ``intervals.py`` with an
edit but never reads it: replay alone cannot rebuild the fix (``fix_files_lost``, no task).
With the repository the project was committed in before the session, the same session
yields one verified task (``harbor run``: oracle 1.0, nop 0.0) that records the commit, holds
no ``.git``, and a rerun of the unchanged repository and session builds nothing.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from traj2env_assets_tests.example_run import EXAMPLES, run_examples
from traj2env_assets_tests.harbor_jobs import rewards_of, run_harbor_agents
from traj2env_assets_tests.repositories.gitrepo import commit

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SAMPLE = EXAMPLES / "trajectories" / "pi" / "python-pytest-fix.jsonl"
RECORDED_CWD = "/home/dev/intervals"


def _session_on_repository(repo: Path, sessions: Path) -> str:
    """Commit the sample's project to ``repo`` before the session and write the session
    without its writes: it reads the tests, runs them, edits intervals.py unseen, reruns.
    Returns the commit."""
    lines = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    written: dict[str, str] = {}
    dropped: set[str] = set()
    for line in lines:
        for part in line.get("message", {}).get("content", []):
            if isinstance(part, dict) and part.get("type") == "toolCall" and part["name"] == "write":
                written[part["arguments"]["path"].removeprefix(RECORDED_CWD + "/")] = part["arguments"]["content"]
                dropped.add(part["id"])
    used = commit(repo, written, "2026-02-01T09:00:00+00:00", "the project before the session")
    kept = []
    for line in lines:
        message = line.get("message", {})
        if message.get("toolCallId") in dropped or any(
            isinstance(p, dict) and p.get("id") in dropped for p in message.get("content", [])
        ):
            continue
        if message.get("toolName") == "read":  # the read shows the tests, not the file it fixes
            message["content"] = [{"type": "text", "text": written["tests/test_intervals.py"]}]
        for part in message.get("content", []):
            if isinstance(part, dict) and part.get("name") == "read":
                part["arguments"]["path"] = f"{RECORDED_CWD}/tests/test_intervals.py"
        kept.append(line)
    text = "\n".join(json.dumps(line) for line in kept).replace(RECORDED_CWD, str(repo))
    sessions.mkdir(parents=True)
    (sessions / "intervals-on-repo.jsonl").write_text(text + "\n")
    return used


def test_a_session_on_a_repository_yields_a_verified_task_only_with_the_repository(tmp_path: Path) -> None:
    repo, sessions = tmp_path / "intervals", tmp_path / "sessions"
    used = _session_on_repository(repo, sessions)
    (tmp_path / "alone").mkdir()
    (tmp_path / "repo").mkdir()

    alone = run_examples(tmp_path / "alone", source=sessions, families=["repair"], rerun=False).first
    assert [c for c in alone["candidates"] if c["kept"]] == []
    assert [c["reason"] for c in alone["candidates"]] == ["fix_files_lost"]
    assert alone["inputs"][0].get("repository") is None

    run = run_examples(tmp_path / "repo", source=sessions, families=["repair"], repositories=[{"path": str(repo)}])
    kept = [c for c in run.first["candidates"] if c["kept"]]
    assert len(kept) == 1, run.first["candidates"]
    repository = run.first["inputs"][0]["repository"]
    assert (repository["status"], repository["commit"], repository["files_from_repository"]) == ("used", used, 2)
    assert (
        run.first["totals_by_reason"].get("fix_files_lost", 0) == 0 < alone["totals_by_reason"].get("fix_files_lost", 0)
    )

    task = Path(kept[0]["published_path"])
    metadata = tomllib.loads((task / "task.toml").read_text())["metadata"]["repository"]
    assert (metadata["commit"], metadata["path"], metadata["files_differing"]) == (used, str(repo.resolve()), 0)
    assert not [p for p in task.rglob("*") if ".git" in p.parts], "the history never enters a task"

    assert run.second is not None
    workspace = run.workspace
    statuses = [json.loads(p.read_text()) for p in workspace.rglob("status.json")]
    assert not any(s["image"]["built"] for s in statuses if s.get("image")), "the rerun built nothing"
    assert {p: p.stat().st_mtime_ns for p in workspace.rglob("trials.json")} == run.trial_files

    results = run_harbor_agents(run.tasks, ["oracle", "nop"], tmp_path / "jobs")
    assert list(rewards_of(results["oracle"]).values()) == [1.0]
    assert list(rewards_of(results["nop"]).values()) == [0.0]

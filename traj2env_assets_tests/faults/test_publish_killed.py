"""``kill -9`` of the publishing process in the middle of copying a task: the destination
never shows a partial task, the task published before stays, and the next publish
removes the killed copy and publishes the task whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from traj2env_assets.stages.publish.atomic_publish import publish_task

FILES = 2000
FILE_BYTES = 64 * 1024
PUBLISH = (
    "import sys; from pathlib import Path; from traj2env_assets.stages.publish.atomic_publish import publish_task; "
    "publish_task(Path(sys.argv[1]), Path(sys.argv[2]), 'task-new')"
)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_kill_9_during_publish_leaves_no_partial_task_and_the_rerun_publishes_it_whole(tmp_path: Path) -> None:
    staged = tmp_path / "staging" / "task-new"
    for index in range(FILES):
        folder = staged / f"d{index % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{index}.bin").write_bytes(os.urandom(FILE_BYTES))
    destination = tmp_path / "tasks"
    existing = destination / "task-old"
    existing.mkdir(parents=True)
    (existing / "task.toml").write_text("kept\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", PUBLISH, str(staged), str(destination)], env=env)
    deadline = time.monotonic() + 60
    while not any(p.rglob("*.bin") for p in destination.glob(".task-new.*.publishing")):
        assert time.monotonic() < deadline and child.poll() is None, "the copy never started"
        time.sleep(0.001)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert not (destination / "task-new").exists(), "killed mid-copy, yet the task appeared"
    [killed_copy] = destination.glob(".task-new.*.publishing")
    assert len(list(killed_copy.rglob("*.bin"))) < FILES

    outcome = publish_task(staged, destination, "task-new")

    assert outcome.status == "published"
    assert _tree(destination / "task-new") == _tree(staged)
    assert sorted(p.name for p in destination.iterdir()) == ["task-new", "task-old"]
    assert (existing / "task.toml").read_text() == "kept\n"


def test_a_live_publishers_copy_is_not_swept(tmp_path: Path) -> None:
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "task.toml").write_text("x\n")
    live = tmp_path / "tasks" / f".task-a.{os.getpid()}.abc.publishing"
    live.mkdir(parents=True)
    assert publish_task(staged, tmp_path / "tasks", "task-a").status == "published"
    assert live.is_dir()

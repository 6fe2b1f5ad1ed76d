"""Faults of the engine itself: the connection to it lost in the middle of an image build,
a trial's container killed from outside in the middle of its run, a candidate's image
removed between stages. Either way nothing half-made is kept, no container is left, and
doing it again works."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from pathlib import Path

import docker
import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.image_build import ImageBuildFailedError, build_image, find_image
from traj2env_assets.docker_engine.labels import CONTROL_LABEL
from traj2env_assets.layout import Workspace
from traj2env_assets.lifecycle.status import (
    CandidateRef,
    CandidateStatus,
    ImageRecord,
    read_status,
    save_status,
    staged_task_dir,
)
from traj2env_assets.stages.images.images import with_image_present
from traj2env_assets.verification.trial import RUN_LABEL, TrialTask, run_trial
from traj2env_assets_tests.docker.test_trials import ScriptControl

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ENGINE_SOCKET = "/var/run/docker.sock"


class SocketProxy:
    """A byte-for-byte proxy to the engine's socket that can drop every connection at
    once and refuse new ones, as the engine going away looks to a client."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._server = socket.socket(socket.AF_UNIX)
        self._server.bind(str(path))
        self._server.listen(64)
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(ENGINE_SOCKET)
            with self._lock:
                self._open += [client, upstream]
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, target), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def cut(self) -> None:
        self._server.close()
        with self._lock:
            for connection in self._open:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
                connection.close()


def test_engine_connection_lost_mid_build_leaves_no_image_and_the_rebuild_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = tmp_path / "context"
    context.mkdir()
    (context / "Dockerfile").write_text(f"FROM python:3.13-slim\nRUN sleep 20 && echo {uuid.uuid4().hex} > /marker\n")
    real = docker.from_env()
    proxy = SocketProxy(tmp_path / "engine.sock")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{proxy.path}")
    through_proxy = docker.DockerClient(base_url=f"unix://{proxy.path}")
    threading.Timer(8, proxy.cut).start()
    started = time.monotonic()
    with pytest.raises(ImageBuildFailedError):
        build_image(through_proxy, context, timeout_s=120, lock_dir=tmp_path / "locks")
    assert time.monotonic() - started < 60
    monkeypatch.delenv("DOCKER_HOST")
    assert find_image(real, context) is None, "a half-built image was tagged"

    rebuilt = build_image(real, context, timeout_s=300, lock_dir=tmp_path / "locks")
    try:
        assert rebuilt.built and find_image(real, context) is not None
    finally:
        real.images.remove(rebuilt.tag, force=True)


def test_a_trial_container_killed_mid_run_is_judged_on_what_it_left_and_leaves_no_container(
    engine: DockerEngine, python_trial: TrialTask
) -> None:
    run_id = f"killed-{uuid.uuid4().hex[:8]}"
    control = ScriptControl("killed-mid-run", "sleep 120")

    def kill_the_agent() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            running = engine.client.containers.list(
                filters={"label": [f"{RUN_LABEL}={run_id}", "traj2env.role=agent"], "status": "running"}
            )
            if running:
                time.sleep(2)
                running[0].kill()
                return
            time.sleep(0.2)

    killer = threading.Thread(target=kill_the_agent)
    killer.start()
    started = time.monotonic()
    result = run_trial(engine, python_trial, control, run_id=run_id)
    killer.join()
    assert time.monotonic() - started < 90, "the trial waited for its deadline"
    assert result.agent.exit_code != 0 and result.reward == 0.0
    assert engine.client.containers.list(all=True, filters={"label": f"{RUN_LABEL}={run_id}"}) == []

    again = run_trial(engine, python_trial, ScriptControl("again", "true"))
    assert again.reward == 0.0 and again.verdict is not None
    assert engine.client.containers.list(all=True, filters={"label": f"{CONTROL_LABEL}=again"}) == []


def test_an_image_removed_between_stages_is_rebuilt_from_the_staged_environment_not_pulled(
    engine: DockerEngine, tmp_path: Path
) -> None:
    """``traj2env prune`` or another process's cleanup between the image stage and the
    calibration or trial stage: the stage rebuilds the image (same content, same tag)."""
    workspace = Workspace(root=tmp_path / "workspace")
    ref = CandidateRef(family="repair", partition_key="pruned", task_id="pruned-image")
    environment = staged_task_dir(workspace, ref) / "environment"
    environment.mkdir(parents=True)
    (environment / "Dockerfile").write_text(f"FROM python:3.13-slim\nRUN echo {uuid.uuid4().hex} > /marker\n")
    image = engine.build(environment)
    status = save_status(
        workspace,
        CandidateStatus(
            family=ref.family,
            partition_key=ref.partition_key,
            task_id=ref.task_id,
            reward_kind="binary",
            reached="images",
            image=ImageRecord(spec_key="spec", staged_path=str(environment.parent), tag=image.tag),
        ),
    )
    try:
        assert with_image_present(workspace, engine, status) == status, "a present image is used as it is"
        engine.client.images.remove(image.tag, force=True)

        rebuilt = with_image_present(workspace, engine, status)
        assert rebuilt.image is not None and rebuilt.image.tag == image.tag and rebuilt.image.built
        assert engine.has_image(image.tag)
        assert read_status(workspace, ref) == rebuilt
    finally:
        engine.client.images.remove(image.tag, force=True)

"""The Trajectory harness: one attempt at one exported task, run inside the harness image.

``python3 /app/harness.py --task <task id>`` (the TaskSpec's ``run_command``):

1. creates the trajectory first (a managed run's session key returns its precreated one);
2. reads the task's ``instruction.md`` and builds its image on the sandbox's Docker engine
   (starting ``dockerd`` when none answers; FROM images are loaded from ``base-images/``);
3. runs the model loop through ``trajectory.Client`` with one ``shell`` tool whose commands
   execute inside a network-less agent container, never in this image (which holds the
   tests); stops the agent at its time limit, turn limit, or on a cut-off reply;
4. grades the submission in a fresh verifier container with its own time limit, exactly
   as the trial matrix does (``verification.verifier``);
5. uploads the evidence (transcript, verifier logs, errors) as artifacts and lists them in
   an ``evidence`` event, logs the reward on the family's scale, then completes.

Endings: ``ENV_DONE`` (the model stopped by itself), ``TIMEOUT`` (agent time limit),
``MAX_STEPS`` (turn limit), ``TRUNCATION`` (a reply cut off at its token limit: its tool
calls are not run) — each graded. ``ERROR`` when there is no valid grade: the model
endpoint, the engine, the image or the verifier failed: ``tests/test.sh`` exited non-zero
or timed out, or left no ``verdict.json`` agreeing with its reward file (the script
writes ``0`` there first, so the file alone would turn a crash into a graded 0). An ERROR
attempt logs no reward (never a substituted 0).

Settings (environment, overriding ``tasks.json``): ``AGENT_TIMEOUT_SEC``,
``VERIFIER_TIMEOUT_SEC``, ``MAX_TURNS`` (default 50), ``COMMAND_TIMEOUT_SEC`` (default
120), ``POLICY_MODEL`` (default ``policy``; a managed run picks the actor itself).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tarfile
import time
import traceback
import uuid
from pathlib import Path
from typing import Any, Literal

import docker
import httpx2
from docker.errors import DockerException
from pydantic import BaseModel, Field
from trajectory import APIError, Client

# Run as /app/harness.py, the script's directory (holding the copied package) is on sys.path.
from traj2env_assets.docker_engine.labels import project_labels
from traj2env_assets.docker_engine.sandbox import (
    ContainerLimits,
    copy_out,
    exec_with_deadline,
    sandbox,
    sanitized,
)
from traj2env_assets.trajectory_export.layout import (
    BASE_IMAGES_DIR,
    TASK_INDEX_FILE,
)
from traj2env_assets.trajectory_export.task_index import HarnessTask, TaskIndex
from traj2env_assets.verification.verifier import VerifierRun, run_verifier

Ending = Literal["ENV_DONE", "TIMEOUT", "MAX_STEPS", "TRUNCATION", "ERROR"]
HERE = Path(__file__).resolve().parent
REWARD_NAME = "reward"
MAX_ARTIFACT_BYTES = 16 * 1024 * 1024
DOCKERD_START_S = 60
SHELL_TOOL = {
    "type": "function",
    "function": {
        "name": "shell",
        "description": "Run a bash command in the task's working directory and return its exit code and output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the bash command"}},
            "required": ["command"],
        },
    },
}
SYSTEM_PROMPT = (
    "You are working in a Linux container on a software task. Use the shell tool to inspect "
    "and change files. When you are done, reply without a tool call."
)


class HarnessSettings(BaseModel):
    agent_timeout_s: float
    verifier_timeout_s: float
    max_turns: int = Field(gt=0)
    command_timeout_s: float = Field(gt=0)
    model: str


class AgentRun(BaseModel):
    ending: Ending


class ModelCallFailed(RuntimeError):
    pass


def settings_for(task: HarnessTask) -> HarnessSettings:
    env = os.environ
    return HarnessSettings(
        agent_timeout_s=float(env.get("AGENT_TIMEOUT_SEC", task.agent_timeout_sec)),
        verifier_timeout_s=float(env.get("VERIFIER_TIMEOUT_SEC", task.verifier_timeout_sec)),
        max_turns=int(env.get("MAX_TURNS", "50")),
        command_timeout_s=float(env.get("COMMAND_TIMEOUT_SEC", "120")),
        model=env.get("POLICY_MODEL", "policy"),
    )


def connect_engine(evidence: dict[str, bytes]) -> docker.DockerClient:
    """The sandbox's Docker engine; ``dockerd`` is started here when none answers."""
    try:
        client = docker.from_env()
        client.ping()
        return client
    except DockerException:
        if shutil.which("dockerd") is None:
            raise
    log = open("/tmp/dockerd.log", "wb")  # noqa: SIM115 - the daemon outlives this function
    subprocess.Popen(["dockerd"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + DOCKERD_START_S
    while time.monotonic() < deadline:
        try:
            client = docker.from_env()
            client.ping()
            return client
        except DockerException:
            time.sleep(1)
    evidence["dockerd.log"] = Path("/tmp/dockerd.log").read_bytes()
    raise RuntimeError(f"dockerd did not answer within {DOCKERD_START_S}s")


def task_image(client: docker.DockerClient, task: HarnessTask, task_dir: Path, index: TaskIndex) -> str:
    for name in task.base_images:
        if not client.images.list(name=name) and name in index.base_image_archives:
            with open(HERE / BASE_IMAGES_DIR / index.base_image_archives[name], "rb") as archive:
                client.images.load(archive.read())
    environment = task_dir / "environment"
    digest = hashlib.sha256()
    for path in sorted(p for p in environment.rglob("*") if p.is_file()):
        digest.update(path.relative_to(environment).as_posix().encode() + b"\0" + path.read_bytes())
    tag = f"traj2env-harness/{task.task_id.lower()}:{digest.hexdigest()[:16]}"
    if not client.images.list(name=tag):
        client.images.build(
            path=str(environment),
            tag=tag,
            rm=True,
            forcerm=True,
            labels=project_labels("task-image"),
            timeout=int(task.build_timeout_sec),
        )
    return tag


def agent_loop(
    client: Client,
    tid: str,
    box: Any,
    instruction: str,
    task: HarnessTask,
    settings: HarnessSettings,
    messages: list[dict[str, Any]],
) -> AgentRun:
    """The model loop; ``messages`` is filled as it goes (the transcript, even on failure)."""
    messages += [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": instruction}]
    run = AgentRun(ending="MAX_STEPS")
    deadline = time.monotonic() + settings.agent_timeout_s
    for _ in range(settings.max_turns):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            run.ending = "TIMEOUT"
            return run
        try:
            response = client.chat.completions.create(
                model=settings.model,
                messages=messages,
                x_trajectory_id=tid,
                extra_body={"tools": [SHELL_TOOL], "tool_choice": "auto"},
                timeout=remaining,
            )
        except APIError as exc:
            if time.monotonic() >= deadline:
                run.ending = "TIMEOUT"
                return run
            raise ModelCallFailed(f"model call failed: {type(exc).__name__}: {exc}") from exc
        if not response.choices:
            raise ModelCallFailed("model reply has no choices")
        choice = response.choices[0]
        calls = choice.message.tool_calls or []
        messages.append(
            {
                "role": "assistant",
                "content": choice.message.content,
                **({"tool_calls": [call.model_dump(mode="json") for call in calls]} if calls else {}),
            }
        )
        if choice.finish_reason in ("length", "max_tokens"):
            # A cut-off reply's tool calls may be incomplete: they are not run.
            run.ending = "TRUNCATION"
            return run
        if not calls:
            run.ending = "ENV_DONE"
            return run
        for call in calls:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                run.ending = "TIMEOUT"
                return run
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": _run_tool(box, call, task, settings, remaining)}
            )
            if time.monotonic() >= deadline:
                run.ending = "TIMEOUT"
                return run
    run.ending = "MAX_STEPS"
    return run


def _run_tool(box: Any, call: Any, task: HarnessTask, settings: HarnessSettings, remaining: float) -> str:
    if call.function.name != "shell":
        return f"error: unknown tool {call.function.name!r}; the only tool is shell"
    try:
        command = json.loads(call.function.arguments or "{}")["command"]
    except (ValueError, KeyError, TypeError):
        return 'error: the shell tool takes {"command": "<bash command>"}'
    if not isinstance(command, str):
        return "error: command must be a string"
    # Rounded up, a command cut at the agent's deadline ends at or after it (and `timeout 0`
    # would mean no limit).
    limit = max(1, math.ceil(min(settings.command_timeout_s, remaining)))
    outcome = exec_with_deadline(box, command, timeout_s=limit, workdir=task.workdir)
    note = f" (stopped after {limit}s)" if outcome.timed_out else ""
    return f"exit code: {outcome.exit_code}{note}\n{outcome.output_tail}"


def upload_artifact(client: Client, tid: str, name: str, data: bytes) -> str:
    media_type = "application/json" if name.endswith(".json") else "text/plain"
    if len(data) > MAX_ARTIFACT_BYTES:
        data = data[-MAX_ARTIFACT_BYTES:]
    md5 = base64.b64encode(hashlib.md5(data, usedforsecurity=False).digest()).decode()
    upload = client.trajectories.artifacts.create_upload(tid, media_type=media_type, size_bytes=len(data), md5=md5)
    response = httpx2.put(upload.upload_url, content=data, headers=upload.headers, timeout=120)
    response.raise_for_status()
    return client.trajectories.artifacts.complete_upload(tid, upload.artifact_id).artifact_id


def attempt(
    client: Client, tid: str, task_id: str, tasks_dir: Path, evidence: dict[str, bytes]
) -> tuple[Ending, float | None, HarnessTask | None]:
    """The agent and verifier phases; returns the ending and the grade (None: no valid grade)."""
    index = TaskIndex.model_validate_json((HERE / TASK_INDEX_FILE).read_text(encoding="utf-8"))
    task = index.tasks[task_id]
    task_dir = tasks_dir / task_id
    instruction = (task_dir / "instruction.md").read_text(encoding="utf-8")
    settings = settings_for(task)
    engine = connect_engine(evidence)
    image = task_image(engine, task, task_dir, index)
    limits = ContainerLimits(memory=f"{task.memory_mb}m" if task.memory_mb else "4g")
    labels = {"traj2env.harness_attempt": tid}
    with sandbox(engine, image, role="agent", limits=limits, labels=labels, work_s=settings.agent_timeout_s) as box:
        transcript: list[dict[str, Any]] = []
        try:
            agent = agent_loop(client, tid, box, instruction, task, settings, transcript)
        finally:
            evidence["transcript.json"] = json.dumps(transcript, indent=1).encode()
        box.kill()
        with copy_out(box, task.submission_path) as raw:
            submission = sanitized(raw)
    with (
        submission,
        sandbox(
            engine, image, role="verifier", limits=limits, labels=labels, work_s=settings.verifier_timeout_s
        ) as verifier_box,
    ):
        graded: VerifierRun = run_verifier(
            verifier_box, task_dir / "tests", task.submission_path, submission, timeout_s=settings.verifier_timeout_s
        )
    for name, content in graded.logs.items():
        evidence[f"verifier/{name}"] = content
    evidence["verifier/exec.json"] = graded.outcome.model_dump_json(indent=1).encode()
    reward, problem = graded_reward(graded, task)
    if reward is None:
        reward_file = graded.logs.get("reward.txt")
        evidence["error.txt"] = f"verifier gave no valid grade ({problem}); reward file: {reward_file!r}".encode()
        return "ERROR", None, task
    return agent.ending, reward, task


def graded_reward(graded: VerifierRun, task: HarnessTask) -> tuple[float | None, str]:
    """The verifier's grade, or None and why there is none.

    ``tests/test.sh`` writes ``0`` to reward.txt before it runs anything, so reward.txt
    alone cannot tell a graded 0 from a verifier that crashed after that line. A grade
    needs the script to finish (exit 0, in time) and its last step, the verdict writer,
    to leave ``verdict.json`` whose reward is the one in reward.txt.
    """
    outcome = graded.outcome
    if outcome.timed_out:
        return None, "timed out"
    if outcome.exit_code != 0:
        return None, f"exit code {outcome.exit_code}"
    if graded.verdict is None:
        return None, "exit code 0 but no verdict.json: the verdict step did not run"
    if graded.reward is None:
        return None, "no numeric reward in reward.txt"
    claimed = graded.verdict.get("reward")
    if isinstance(claimed, bool) or not isinstance(claimed, int | float) or claimed != graded.reward:
        return None, f"verdict.json reward {claimed!r} is not reward.txt's {graded.reward:g}"
    if not task.reward_min <= graded.reward <= task.reward_max:
        return None, f"reward {graded.reward:g} outside [{task.reward_min:g}, {task.reward_max:g}]"
    return graded.reward, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", help="the task id (a key of tasks.json)")
    parser.add_argument("--tasks-dir", type=Path, default=HERE / "tasks")
    parser.add_argument("--self-check", action="store_true", help="check the image has what the harness needs")
    args = parser.parse_args(argv)
    if args.self_check:
        return self_check(args.tasks_dir)
    if not args.task:
        parser.error("--task is required")
    client = Client()
    # First, before any setup: the trajectory every model call and grade belongs to.
    tid = client.trajectories.create().tid
    evidence: dict[str, bytes] = {}
    ending: Ending = "ERROR"
    reward: float | None = None
    task: HarnessTask | None = None
    try:
        ending, reward, task = attempt(client, tid, args.task, args.tasks_dir, evidence)
    except Exception:  # noqa: BLE001 - every failure is reported as ERROR with its traceback
        evidence["error.txt"] = traceback.format_exc().encode()
        ending, reward = "ERROR", None
    artifacts: dict[str, str] = {}
    missing: dict[str, str] = {}
    for name, content in evidence.items():
        try:
            artifacts[name] = upload_artifact(client, tid, name, content)
        except Exception as exc:  # noqa: BLE001 - a missing log is reported, not fatal
            missing[name] = f"{type(exc).__name__}: {exc}"[:300]
    client.trajectories.log_event(
        tid,
        event_id=f"evidence-{uuid.uuid4().hex[:12]}",
        name="evidence",
        payload={
            "task": args.task,
            "ending": ending,
            "graded": reward is not None,
            "artifacts": artifacts,
            "missing_artifacts": missing,
        },
    )
    if reward is not None and task is not None:
        try:
            client.trajectories.log_reward(
                tid, name=REWARD_NAME, value=reward, min_value=task.reward_min, max_value=task.reward_max
            )
        except APIError:
            # The grade did not reach the platform: this attempt has no recorded grade.
            ending, reward = "ERROR", None
    client.trajectories.complete(tid, termination_reason=ending)
    print(json.dumps({"trajectory_id": tid, "ending": ending, "reward": reward}))
    return 0


def self_check(tasks_dir: Path) -> int:
    """Run at image build: every indexed task is unpacked and every base archive present."""
    index = TaskIndex.model_validate_json((HERE / TASK_INDEX_FILE).read_text(encoding="utf-8"))
    problems = [
        f"{task_id}: {name} missing"
        for task_id in index.tasks
        for name in ("instruction.md", "environment/Dockerfile", "tests/test.sh")
        if not (tasks_dir / task_id / name).is_file()
    ]
    problems += [
        f"base image archive {archive} missing"
        for archive in index.base_image_archives.values()
        if not tarfile.is_tarfile(HERE / BASE_IMAGES_DIR / archive)
    ]
    for tool in ("dockerd", "docker"):
        if shutil.which(tool) is None:
            problems.append(f"{tool} not installed")
    # Harbor-style tasks may bring a compose file: the plugin must answer without a daemon.
    if shutil.which("docker") is not None:
        compose = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, check=False)
        if compose.returncode != 0:
            problems.append(f"docker compose not installed: {compose.stderr.strip()[:200]}")
    print("\n".join(problems) or f"ok: {len(index.tasks)} tasks")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

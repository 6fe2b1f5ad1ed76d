"""A local fake of the Trajectory platform endpoints that trajectory-sdk 0.9.31 calls.

Served on 127.0.0.1 by a thread; every request is recorded. It checks what the real
API's schema checks (the installed SDK's ``resources/`` give the paths and bodies):
the API key and version headers, exact body keys (unknown keys are a 422, as the
server's ``additionalProperties: false``), ``X-Trajectory-Id`` on chat calls, reward
ranges, artifact sizes and MD5s on the signed-URL PUTs (which carry no API key), and
409 ``trajectory_already_terminal`` after completion. The model behind
``/v1/chat/completions`` is scripted: a list of replies, one per call.

Benchmark ingestion (``push``/``start_push``/``get_operation``) is served with per-file
signed PUT URLs; the operation's status is scripted (``ingestion_status``, with
``ingestion_failures`` listed on the ``failure`` page), so a test can fail a push or leave
it running and reconnect later. The diagnostics the note runs are served too: the
single-task path (agent by name, ``benchmarks/uploads``, ``diagnostics/task/ingest``,
image build and list, ``diagnostics/task/run``) and ``diagnostics/benchmark/run``, each
reporting scripted task outcomes (``task_outcomes``) after ``diagnostic_polls`` running
status polls.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import BaseModel, Field

API_KEY = "fake-session-key"
MAX_ARTIFACT_BYTES = 16 * 1024 * 1024
TERMINATION_REASONS = {
    "TIMEOUT",
    "ENV_DONE",
    "MAX_STEPS",
    "TRUNCATION",
    "LIMIT_REACHED",
    "STALE",
    "ERROR",
    "MISSING_SUBMIT",
}
CHAT_KEYS = {
    "model",
    "messages",
    "stream",
    "disable_thinking",
    "temperature",
    "max_tokens",
    "top_p",
    "tools",
    "tool_choice",
}


class RecordedRequest(BaseModel):
    method: str
    path: str
    headers: dict[str, str]
    body: Any = None
    status: int = 0


class TrajectoryRecord(BaseModel):
    tid: str
    status: str = "running"
    termination_reason: str | None = None
    rewards: list[dict[str, Any]] = Field(default_factory=list)
    events: list[dict[str, Any]] = Field(default_factory=list)
    artifacts: dict[str, dict[str, Any]] = Field(default_factory=dict)
    chat_requests: list[dict[str, Any]] = Field(default_factory=list)


class PlatformError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def tool_call_reply(command: str, call_id: str | None = None) -> dict[str, Any]:
    """A scripted assistant reply asking for one shell command."""
    return {
        "finish_reason": "tool_calls",
        "message": {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id or f"call_{uuid.uuid4().hex[:8]}",
                    "type": "function",
                    "function": {"name": "shell", "arguments": json.dumps({"command": command})},
                }
            ],
        },
    }


def final_reply(text: str = "Done.", finish_reason: str = "stop") -> dict[str, Any]:
    return {"finish_reason": finish_reason, "message": {"role": "assistant", "content": text}}


class FakeTrajectoryPlatform:
    def __init__(self, replies: list[dict[str, Any]] | None = None) -> None:
        self.replies = list(replies or [])
        self.requests: list[RecordedRequest] = []
        self.trajectories: dict[str, TrajectoryRecord] = {}
        self.session_tid = f"traj_{uuid.uuid4().hex[:12]}"
        self.blobs: dict[str, bytes] = {}
        self.ingestions: dict[str, dict[str, Any]] = {}
        # Scripted ingestion: the status every operation reports, and its failures.
        self.ingestion_status = "succeeded"
        self.ingestion_failures: list[dict[str, Any]] = []
        # Scripted diagnostics: one outcome per task (cycled), and running polls first.
        self.task_outcomes: list[dict[str, Any]] = [
            {"status": "completed", "termination_reason": "ENV_DONE", "reward": 1.0, "failure": None}
        ]
        self.diagnostic_failure: dict[str, Any] | None = None
        self.diagnostic_polls = 1
        self.image_build_status = "ready"
        self.diagnostic_benches: dict[str, dict[str, Any]] = {}
        self.diagnostics: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        assert isinstance(host, str)
        return f"http://{host}:{port}"

    @property
    def trajectory(self) -> TrajectoryRecord:
        return self.trajectories[self.session_tid]

    def paths(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]

    # --- routing -------------------------------------------------------------------

    def handle(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, query: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        if path.startswith("/_blob/"):
            if "x-api-key" in headers:
                raise PlatformError(400, "credential_on_signed_url", "signed URLs take no API key")
            return self._blob(method, path, headers, raw)
        if headers.get("x-api-key") != API_KEY:
            raise PlatformError(401, "unauthorized", "missing or wrong X-API-Key")
        if headers.get("trajectory-api-version") is None:
            raise PlatformError(400, "missing_api_version", "Trajectory-API-Version header required")
        body = json.loads(raw) if raw else None
        parts = [p for p in path.split("/") if p]
        if method == "POST" and path == "/api/v1/trajectories":
            return self._create(body, headers)
        if method == "POST" and path == "/v1/chat/completions":
            return self._chat(body, headers)
        if parts[:3] == ["api", "v1", "trajectories"] and len(parts) >= 5 and method == "POST":
            return self._trajectory_call(parts[3], parts[4:], body)
        if parts[:3] == ["api", "v1", "benchmark-ingestion"]:
            return self._ingestion(method, parts[3:], body, headers)
        if parts[:3] == ["api", "v1", "agents"] and parts[3:4] == ["name"] and method == "GET":
            return self._agent(parts[4])
        if parts[:3] == ["api", "v1", "benchmarks"]:
            return self._benchmarks(method, parts[3:], body)
        if parts[:3] == ["api", "v1", "diagnostics"]:
            return self._diagnostic(method, parts[3:], body, query or {})
        raise PlatformError(404, "not_found", f"no route {method} {path}")

    def _create(self, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        _keys(body or {}, required=set(), allowed={"agent_id"})
        if "idempotency-key" not in headers:
            raise PlatformError(400, "missing_idempotency_key", "Idempotency-Key header required")
        # With a managed session key every create returns the rollout's precreated trajectory.
        self.trajectories.setdefault(self.session_tid, TrajectoryRecord(tid=self.session_tid))
        return 200, {"tid": self.session_tid}

    def _live(self, tid: str) -> TrajectoryRecord:
        record = self.trajectories.get(tid)
        if record is None:
            raise PlatformError(404, "trajectory_not_found", f"no trajectory {tid}")
        if record.status != "running":
            raise PlatformError(409, "trajectory_already_terminal", f"trajectory {tid} is {record.status}")
        return record

    def _chat(self, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        record = self._live(headers.get("x-trajectory-id", ""))
        _keys(body, required={"model", "messages"}, allowed=CHAT_KEYS)
        calls_seen: set[str] = set()
        for message in body["messages"]:
            role = message.get("role")
            if role not in {"system", "user", "assistant", "tool"}:
                raise PlatformError(422, "invalid_message", f"bad role {role!r}")
            for call in message.get("tool_calls") or []:
                _keys(call, required={"id", "type", "function"}, allowed={"id", "type", "function"})
                if not isinstance(call["function"].get("arguments"), str):
                    raise PlatformError(422, "invalid_message", "tool call arguments must be a JSON string")
                calls_seen.add(call["id"])
            if role == "tool" and message.get("tool_call_id") not in calls_seen:
                raise PlatformError(422, "invalid_message", "tool message answers no earlier tool call")
        record.chat_requests.append(body)
        if not self.replies:
            raise PlatformError(500, "script_exhausted", "the scripted model has no reply left")
        reply = self.replies.pop(0)
        if "error_status" in reply:
            raise PlatformError(reply["error_status"], "upstream_error", "scripted model failure")
        return 200, {
            "id": f"chatcmpl-{uuid.uuid4().hex[:8]}",
            "object": "chat.completion",
            "created": int(datetime.now(UTC).timestamp()),
            "model": body["model"],
            "choices": [{"index": 0, "message": reply["message"], "finish_reason": reply["finish_reason"]}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _trajectory_call(self, tid: str, rest: list[str], body: Any) -> tuple[int, Any]:
        record = self._live(tid)
        if rest == ["artifacts"]:
            _keys(body, required={"media_type", "size_bytes", "md5"}, allowed={"media_type", "size_bytes", "md5"})
            if not 0 <= body["size_bytes"] <= MAX_ARTIFACT_BYTES:
                raise PlatformError(422, "artifact_too_large", "size_bytes must be at most 16 MiB")
            if len(base64.b64decode(body["md5"])) != 16:
                raise PlatformError(422, "invalid_md5", "md5 must be base64 of the raw digest")
            artifact_id = f"art_{uuid.uuid4().hex[:10]}"
            record.artifacts[artifact_id] = {**body, "uploaded": False, "completed": False}
            return 200, {
                "artifact_id": artifact_id,
                "upload_url": f"{self.base_url}/_blob/artifacts/{tid}/{artifact_id}",
                "headers": {"Content-Type": body["media_type"], "Content-MD5": body["md5"]},
            }
        if len(rest) == 3 and rest[0] == "artifacts" and rest[2] == "complete":
            if body is not None:
                raise PlatformError(422, "unexpected_body", "complete_upload takes no body")
            artifact = record.artifacts.get(rest[1])
            if artifact is None or not artifact["uploaded"]:
                raise PlatformError(409, "artifact_not_uploaded", "PUT the bytes before completing")
            artifact["completed"] = True
            return 200, {
                "artifact_id": rest[1],
                "media_type": artifact["media_type"],
                "size_bytes": artifact["size_bytes"],
                "md5": artifact["md5"],
                "created_at": datetime.now(UTC).isoformat(),
            }
        if rest == ["events"]:
            _keys(body, required={"event_id", "name"}, allowed={"event_id", "name", "payload"})
            if len(body["event_id"]) > 63:
                raise PlatformError(422, "invalid_event_id", "event_id is at most 63 characters")
            record.events.append(body)
            return 200, {"ok": True, "trajectory_id": tid, "status": record.status}
        if rest == ["rewards"]:
            _keys(
                body,
                required={"reward_id", "name", "value", "min_value", "max_value"},
                allowed={"reward_id", "name", "value", "min_value", "max_value", "explanation", "weight"},
            )
            if not 1 <= len(body["name"]) <= 64 or not body["min_value"] <= body["value"] <= body["max_value"]:
                raise PlatformError(422, "invalid_reward", "reward name or range invalid")
            record.rewards.append(body)
            return 200, {"ok": True, "trajectory_id": tid, "status": record.status}
        if rest == ["complete"]:
            _keys(body or {}, required=set(), allowed={"termination_reason"})
            reason = (body or {}).get("termination_reason", "ENV_DONE")
            if reason not in TERMINATION_REASONS:
                raise PlatformError(422, "invalid_termination_reason", f"{reason!r} cannot be sent")
            record.status, record.termination_reason = "completed", reason
            return 200, {"trajectory_id": tid, "status": "completed"}
        raise PlatformError(404, "not_found", f"no trajectory route {rest}")

    def _blob(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        if method != "PUT":
            raise PlatformError(405, "method_not_allowed", "signed URLs take PUT")
        md5 = base64.b64encode(hashlib.md5(raw, usedforsecurity=False).digest()).decode()
        parts = path.split("/")
        if parts[2] == "diag":
            # The diagnostic's upload declarations carry no MD5: the size is what is checked.
            declared = self.diagnostic_benches[parts[3]]["declared"]["/".join(parts[4:])]
            if len(raw) != declared["size_bytes"]:
                raise PlatformError(400, "bad_size", "bytes differ from the declared size")
        elif headers.get("content-md5") != md5:
            raise PlatformError(400, "bad_digest", "Content-MD5 does not match the bytes")
        if parts[2] == "artifacts":
            artifact = self.trajectories[parts[3]].artifacts[parts[4]]
            if len(raw) != artifact["size_bytes"] or md5 != artifact["md5"]:
                raise PlatformError(400, "bad_digest", "bytes differ from the reserved upload")
            artifact["uploaded"] = True
        self.blobs[path.removeprefix("/_blob/")] = raw
        return 200, None

    def _ingestion(self, method: str, rest: list[str], body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        if method == "POST" and rest == ["sessions"]:
            _keys(
                body,
                required={"bench_name", "metadata", "build_images", "upload_digest"},
                allowed={"bench_name", "metadata", "build_images", "upload_digest", "agent_id", "agent_name"},
            )
            if ("agent_id" in body) == ("agent_name" in body):
                raise PlatformError(422, "agent_required", "exactly one of agent_id, agent_name")
            op = f"op_{uuid.uuid4().hex[:10]}"
            self.ingestions[op] = {"session": body, "declared": {}, "bench_id": f"bench_{uuid.uuid4().hex[:8]}"}
            return 200, {"session_id": op, "bench_id": self.ingestions[op]["bench_id"], "accepted": False}
        op = rest[1] if len(rest) > 1 else ""
        ingestion = self.ingestions.get(op)
        if ingestion is None:
            raise PlatformError(404, "operation_not_found", op)
        if method == "POST" and rest[0] == "sessions" and rest[2:] == ["uploads"]:
            _keys(body, required={"files"}, allowed={"files", "upload_method"})
            urls = []
            for declared in body["files"]:
                _keys(
                    declared,
                    required={"path", "content_type", "size_bytes", "md5", "kind"},
                    allowed={"path", "content_type", "size_bytes", "md5", "kind"},
                )
                ingestion["declared"][declared["path"]] = declared
                urls.append(
                    {
                        "path": declared["path"],
                        "url": f"{self.base_url}/_blob/bench/{op}/{declared['path']}",
                        "headers": {"Content-MD5": declared["md5"]},
                    }
                )
            return 200, {"urls": urls}
        if method == "POST" and rest[0] == "sessions" and rest[2:] == ["finalize"]:
            _keys(body, required={"object_count", "part_count"}, allowed={"object_count", "part_count"})
            uploaded = {p.removeprefix(f"bench/{op}/") for p in self.blobs if p.startswith(f"bench/{op}/")}
            if uploaded != set(ingestion["declared"]) or body["object_count"] != len(uploaded):
                raise PlatformError(409, "uploads_incomplete", "not every declared file was uploaded")
            return 200, self._operation(op)
        if method == "GET" and rest[0] == "operations" and len(rest) == 2:
            return 200, self._operation(op)
        if method == "GET" and rest[0] == "operations" and rest[2:] == ["failure"]:
            return 200, {"items": self.ingestion_failures, "next_cursor": None}
        raise PlatformError(404, "not_found", f"no ingestion route {rest}")

    def _operation(self, op: str) -> dict[str, Any]:
        ingestion = self.ingestions[op]
        tasks = self.uploaded_tasks(op)
        status = self.ingestion_status
        registered = len(tasks) if status == "succeeded" else 0
        return {
            "operation_id": op,
            "bench_id": ingestion["bench_id"],
            "status": status,
            "stage": "registering",
            "attempt": 1,
            "max_attempts": 1,
            "build_images": ingestion["session"]["build_images"],
            "registered_tasks": registered,
            "total_tasks": len(tasks),
            "task_count": registered,
            "failure_count": len(self.ingestion_failures),
            "ready": status == "succeeded",
        }

    # --- diagnostics ---------------------------------------------------------------

    def _agent(self, name: str) -> tuple[int, Any]:
        now = datetime.now(UTC).isoformat()
        return 200, {
            "agent_id": f"agent_{name}",
            "organization_id": "org_fake",
            "name": name,
            "description": None,
            "created_at": now,
            "updated_at": now,
            "benchmark_count": 0,
            "production_model_slug": None,
        }

    def _benchmarks(self, method: str, rest: list[str], body: Any) -> tuple[int, Any]:
        if method == "POST" and rest == ["uploads"]:
            _keys(body, required={"files"}, allowed={"files", "bench_id"})
            bench_id = body.get("bench_id") or f"bench_{uuid.uuid4().hex[:8]}"
            bench = self.diagnostic_benches.setdefault(bench_id, {"declared": {}, "task": None})
            urls = []
            for declared in body["files"]:
                bench["declared"][declared["path"]] = declared
                _keys(
                    declared,
                    required={"path", "content_type", "size_bytes"},
                    allowed={"path", "content_type", "size_bytes"},
                )
                urls.append(
                    {
                        "path": declared["path"],
                        "url": f"{self.base_url}/_blob/diag/{bench_id}/{declared['path']}",
                        "headers": {"Content-Type": declared["content_type"]},
                    }
                )
            return 200, {"bench_id": bench_id, "urls": urls, "expires_at": datetime.now(UTC).isoformat()}
        bench_id = rest[0] if rest else ""
        if rest[1:] == ["images", "build"] and method == "POST":
            self._known_bench(bench_id)
            return 200, {"bench_id": bench_id}
        if rest[1:] == ["images"] and method == "GET":
            tasks = self._known_bench(bench_id)
            return 200, {
                "items": [
                    {"task_id": task["name"], "provider": "fake", "build_status": self.image_build_status}
                    for task in tasks
                ],
                "has_more": False,
                "next_cursor": None,
                "bench_id": bench_id,
            }
        raise PlatformError(404, "not_found", f"no benchmarks route {rest}")

    def _known_bench(self, bench_id: str) -> list[dict[str, Any]]:
        """The tasks registered under a bench id, by a diagnostic ingest or a succeeded push."""
        if bench_id in self.diagnostic_benches and self.diagnostic_benches[bench_id]["task"] is not None:
            return [self.diagnostic_benches[bench_id]["task"]]
        for op, ingestion in self.ingestions.items():
            if ingestion["bench_id"] == bench_id and self.ingestion_status == "succeeded":
                return self.uploaded_tasks(op)
        raise PlatformError(404, "benchmark_not_found", f"no registered benchmark {bench_id}")

    def _diagnostic(self, method: str, rest: list[str], body: Any, query: dict[str, str]) -> tuple[int, Any]:
        if method == "POST" and rest == ["task", "ingest"]:
            bench = self.diagnostic_benches.get(query.get("bench_id", ""))
            if bench is None or not query.get("agent_id"):
                raise PlatformError(422, "invalid_body", "agent_id and an uploaded bench_id are required")
            if not isinstance(body, dict) or not body.get("runtime"):
                raise PlatformError(422, "runtime_required", "a diagnostic task carries its own runtime")
            uploaded = {p.split("/", 2)[2] for p in self.blobs if p.startswith(f"diag/{query['bench_id']}/")}
            if uploaded != set(bench["declared"]):
                raise PlatformError(409, "uploads_incomplete", "not every declared file was uploaded")
            bench["task"] = body
            return 200, {"bench_id": query["bench_id"], "name": "task-diagnostic", "task_count": 1, "failed_tasks": []}
        if method == "POST" and rest in (["task", "run"], ["benchmark", "run"]):
            _keys(body, required={"bench_id"}, allowed={"bench_id", "base_model_slug"})
            tasks = self._known_bench(body["bench_id"])[:10]
            diagnostic_id = f"diag_{uuid.uuid4().hex[:8]}"
            self.diagnostics[diagnostic_id] = {
                "kind": rest[0],
                "bench_id": body["bench_id"],
                "polls": 0,
                "tasks": [task["name"] for task in tasks],
            }
            return 200, {"benchmark_diagnostic_id": diagnostic_id, "bench_id": body["bench_id"], "status": "pending"}
        diagnostic = self.diagnostics.get(rest[0] if rest else "")
        if diagnostic is None or method != "GET":
            raise PlatformError(404, "diagnostic_not_found", f"no diagnostic route {rest}")
        outcomes = [
            {"task_id": f"task_{name}", **self.task_outcomes[i % len(self.task_outcomes)]}
            for i, name in enumerate(diagnostic["tasks"])
        ]
        status = (
            "failed" if self.diagnostic_failure or any(o["status"] != "completed" for o in outcomes) else "completed"
        )
        if rest[1:] == ["status"]:
            diagnostic["polls"] += 1
            running = diagnostic["polls"] <= self.diagnostic_polls
            return 200, {"benchmark_diagnostic_id": rest[0], "status": "running" if running else status}
        now = datetime.now(UTC).isoformat()
        counts = Counter(o["status"] for o in outcomes)
        return 200, {
            "benchmark_diagnostic_id": rest[0],
            "bench_id": diagnostic["bench_id"],
            "eval_run_id": "eval_fake",
            "base_model_slug": "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16",
            "status": status,
            "created_at": now,
            "updated_at": now,
            "started_at": now,
            "completed_at": now,
            "failure": self.diagnostic_failure,
            "task_counts": {
                "completed": counts["completed"],
                "failed": counts["failed"],
                "cancelled": counts["cancelled"],
            },
            "tasks": [
                {
                    **o,
                    "runtime_id": "rt_fake",
                    "created_at": now,
                    "updated_at": now,
                    "started_at": now,
                    "completed_at": now,
                }
                for o in outcomes
            ],
        }

    def uploaded_tasks(self, op: str) -> list[dict[str, Any]]:
        return [
            task
            for path, raw in sorted(self.blobs.items())
            if path.startswith(f"bench/{op}/parts/")
            for task in json.loads(raw)
        ]

    def uploaded_files(self, op: str) -> dict[str, bytes]:
        prefix = f"bench/{op}/"
        return {
            p.removeprefix(prefix): raw
            for p, raw in self.blobs.items()
            if p.startswith(prefix) and not p.startswith(f"{prefix}parts/")
        }

    # --- HTTP plumbing -------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                split = urlsplit(self.path)
                path = split.path
                query = {key: values[-1] for key, values in parse_qs(split.query).items()}
                headers = {k.lower(): v for k, v in self.headers.items()}
                recorded = RecordedRequest(method=self.command, path=path, headers=headers)
                with platform.lock:
                    try:
                        if raw and not path.startswith("/_blob/"):
                            recorded.body = json.loads(raw)
                        status, payload = platform.handle(self.command, path, headers, raw, query)
                    except PlatformError as exc:
                        status, payload = (
                            exc.status,
                            {"error": {"type": "invalid_request_error", "code": exc.code, "message": exc.message}},
                        )
                    except (KeyError, TypeError, ValueError, IndexError) as exc:
                        status, payload = (
                            422,
                            {"error": {"type": "invalid_request_error", "code": "invalid_body", "message": repr(exc)}},
                        )
                    recorded.status = status
                    platform.requests.append(recorded)
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                # No retries on scripted errors: the harness must see the failure, not a retry.
                self.send_header("Trajectory-Should-Retry", "false")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = _serve

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def _keys(body: Any, *, required: set[str], allowed: set[str]) -> None:
    if not isinstance(body, dict):
        raise PlatformError(422, "invalid_body", "a JSON object is required")
    missing, unknown = required - body.keys(), body.keys() - allowed
    if missing or unknown:
        raise PlatformError(422, "invalid_body", f"missing {sorted(missing)}, unknown {sorted(unknown)}")


@contextmanager
def running_platform(replies: list[dict[str, Any]] | None = None) -> Iterator[FakeTrajectoryPlatform]:
    platform = FakeTrajectoryPlatform(replies)
    platform.thread.start()
    try:
        yield platform
    finally:
        platform.server.shutdown()
        platform.server.server_close()

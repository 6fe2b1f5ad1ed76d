"""A local OpenAI-compatible chat-completions server that answers from a script, for offline tests."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import BaseModel, ConfigDict

VALID_CONTENT = json.dumps({"title": "Parse CSV headers", "tests": ["test_header", "test_empty"]})


class TitleProposal(BaseModel):
    """The schema the tests ask the fake model for."""

    model_config = ConfigDict(extra="forbid")

    title: str
    tests: list[str]


@dataclass(frozen=True)
class FakeReply:
    status: int = 200
    content: str | None = VALID_CONTENT
    finish_reason: str = "stop"
    refusal: str | None = None
    prompt_tokens: int = 1000
    completion_tokens: int = 500
    reported_cost: float | None = None
    delay_s: float = 0.0
    error_message: str = "fake error"
    no_choices: bool = False

    def anthropic_body(self, model: str) -> dict[str, Any]:
        if self.status != 200:
            return {"type": "error", "error": {"type": "fake", "message": self.error_message}}
        stop_reason = {"stop": "end_turn", "length": "max_tokens"}[self.finish_reason]
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": self.content or ""}],
            "stop_reason": stop_reason,
            "usage": {"input_tokens": self.prompt_tokens, "output_tokens": self.completion_tokens},
        }

    def body(self, model: str) -> dict[str, Any]:
        if self.status != 200:
            return {"error": {"message": self.error_message, "type": "fake", "code": self.status}}
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.refusal is not None:
            message["refusal"] = self.refusal
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }
        if self.reported_cost is not None:
            usage["cost"] = self.reported_cost
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": []
            if self.no_choices
            else [{"index": 0, "finish_reason": self.finish_reason, "message": message}],
            "usage": usage,
        }


class FakeProvider:
    """Serves OpenAI's ``POST /v1/chat/completions`` and Anthropic's ``POST /v1/messages``:
    the reply ``route`` picks for the request (when set and it picks one), else scripted
    replies first, then ``default``; records every request."""

    def __init__(self) -> None:
        self.default = FakeReply()
        self.route: Callable[[dict[str, Any]], FakeReply | None] | None = None
        self.script: deque[FakeReply] = deque()
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # A short poll interval keeps ``stop`` (and so each test's teardown) quick.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def api_base(self) -> str:
        return f"{self.anthropic_api_base}/v1"

    @property
    def anthropic_api_base(self) -> str:
        # LiteLLM appends ``/v1/messages`` to an Anthropic api_base.
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def then(self, *replies: FakeReply) -> None:
        with self._lock:
            self.script.extend(replies)

    def _next(self, request: dict[str, Any]) -> FakeReply:
        with self._lock:
            self.requests.append(request)
            routed = self.route(request) if self.route else None
            if routed is not None:
                return routed
            return self.script.popleft() if self.script else self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply = provider._next(request)
                time.sleep(reply.delay_s)
                model = request.get("model", "")
                body = reply.anthropic_body(model) if self.path == "/v1/messages" else reply.body(model)
                data = json.dumps(body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and hung up first

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

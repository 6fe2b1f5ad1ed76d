"""A local fake of the Hugging Face Hub endpoints ``huggingface_hub`` uses for qa pinning.

Served on 127.0.0.1 (point ``HF_ENDPOINT`` at :attr:`FakeHub.endpoint`):

- ``GET /api/datasets/<owner>/<name>/commits/<revision>``: the commit list, newest first
  (``HfApi.list_repo_commits``);
- ``HEAD``/``GET /datasets/<owner>/<name>/resolve/<revision>/<path>``: a file at a
  revision (a commit id or ``main``), with the headers ``hf_hub_download`` reads
  (``X-Repo-Commit``, ``ETag``, ``Content-Length``); an unknown repository, revision or
  file answers 404 with the hub's ``X-Error-Code``.

Datasets are small parquet files the tests write with pandas; :func:`sample_hub` loads
the bundled sample dataset (``examples/hub/*.json``) that the sample sessions computed from.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pandas as pd

SAMPLE_DATASETS = Path(__file__).resolve().parents[3] / "examples" / "hub"


def parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    buffer = io.BytesIO()
    pd.DataFrame(rows).to_parquet(buffer, index=False)
    return buffer.getvalue()


@dataclass
class FakeCommit:
    commit_id: str
    date: str
    files: dict[str, bytes]
    title: str = "update"


@dataclass
class FakeHub:
    repos: dict[str, list[FakeCommit]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def add_commit(
        self, repo_id: str, date: str, files: dict[str, bytes], title: str = "update", commit_id: str | None = None
    ) -> str:
        """A commit carrying ``files`` over the previous commit's; returns its id."""
        history = self.repos.setdefault(repo_id, [])
        previous = dict(history[-1].files) if history else {}
        commit_id = commit_id or hashlib.sha1(f"{repo_id}\0{date}\0{len(history)}".encode()).hexdigest()
        history.append(FakeCommit(commit_id, date, {**previous, **files}, title))
        return commit_id

    def __post_init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _commit(self, repo_id: str, revision: str) -> FakeCommit | None:
        history = self.repos.get(repo_id, [])
        if revision == "main":
            return max(history, key=lambda c: c.date) if history else None
        return next((c for c in history if c.commit_id == revision), None)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, status: int, body: bytes, headers: dict[str, str], with_body: bool) -> None:
                self.send_response(status)
                for name, value in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                if with_body:
                    self.wfile.write(body)

            def _missing(self, code: str, with_body: bool) -> None:
                body = json.dumps({"error": code}).encode()
                self._reply(404, body, {"X-Error-Code": code, "Content-Type": "application/json"}, with_body)

            def _serve(self, with_body: bool) -> None:
                path = unquote(urlparse(self.path).path)
                hub.requests.append(f"{self.command} {path}")
                parts = path.strip("/").split("/")
                if parts[:2] == ["api", "datasets"] and len(parts) >= 6 and parts[4] == "commits":
                    repo_id = "/".join(parts[2:4])
                    if repo_id not in hub.repos:
                        return self._missing("RepoNotFound", with_body)
                    newest_first = sorted(hub.repos[repo_id], key=lambda c: c.date, reverse=True)
                    body = json.dumps(
                        [
                            {
                                "id": c.commit_id,
                                "authors": [{"user": "fake"}],
                                "date": c.date,
                                "title": c.title,
                                "message": "",
                            }
                            for c in newest_first
                        ]
                    ).encode()
                    return self._reply(200, body, {"Content-Type": "application/json"}, with_body)
                if parts[:1] == ["datasets"] and len(parts) >= 6 and parts[3] == "resolve":
                    repo_id, revision, file_path = "/".join(parts[1:3]), parts[4], "/".join(parts[5:])
                    if repo_id not in hub.repos:
                        return self._missing("RepoNotFound", with_body)
                    commit = hub._commit(repo_id, revision)
                    if commit is None:
                        return self._missing("RevisionNotFound", with_body)
                    if file_path not in commit.files:
                        return self._missing("EntryNotFound", with_body)
                    content = commit.files[file_path]
                    headers = {
                        "X-Repo-Commit": commit.commit_id,
                        "ETag": f'"{hashlib.sha256(content).hexdigest()}"',
                        "Content-Type": "application/octet-stream",
                    }
                    return self._reply(200, content, headers, with_body)
                return self._missing("NotFound", with_body)

            def do_GET(self) -> None:
                self._serve(with_body=True)

            def do_HEAD(self) -> None:
                self._serve(with_body=False)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler

    def start(self) -> FakeHub:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def sample_hub() -> FakeHub:
    """The bundled sample datasets: every commit of every ``examples/hub/*.json``."""
    hub = FakeHub()
    for path in sorted(SAMPLE_DATASETS.glob("*.json")):
        dataset = json.loads(path.read_text(encoding="utf-8"))
        for commit in dataset["commits"]:
            files = {name: parquet_bytes(rows) for name, rows in commit["files"].items()}
            hub.add_commit(dataset["repo_id"], commit["date"], files, commit["title"], commit["id"])
    return hub

"""One compose deployment under test: its own project name, inbox and UI port, driven the
way a person would drive it — ``scripts/deploy.sh``, ``docker compose``, the GraphQL API."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from dagster_graphql import DagsterGraphQLClient

REPO_ROOT = Path(__file__).resolve().parents[2]
LOCATION = "traj2env"
REPOSITORY = "__repository__"
WORKSPACE = "/srv/traj2env/workspace"
FINISHED = {"SUCCESS", "FAILURE", "CANCELED"}

_RUNS = """
query Runs($filter: RunsFilter) {
  runsOrError(filter: $filter) {
    ... on Runs { results { runId status jobName creationTime endTime tags { key value } } }
    ... on PythonError { message }
  }
}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Deployment:
    def __init__(self, name: str, inbox: Path, port: int) -> None:
        self.name, self.inbox, self.port = name, inbox, port
        self.env = {"TRAJ2ENV_DEPLOYMENT": name, "TRAJ2ENV_INBOX": str(inbox), "TRAJ2ENV_UI_PORT": str(port)}
        self.url = f"http://127.0.0.1:{port}"

    def _run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        completed = subprocess.run(
            argv,
            cwd=REPO_ROOT,
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        if completed.returncode != 0:
            raise AssertionError(
                f"{' '.join(argv)} exited {completed.returncode}:\n{completed.stdout[-3000:]}\n"
                f"{completed.stderr[-3000:]}"
            )
        return completed

    def script(self, action: str, timeout: float = 1800) -> str:
        return self._run(["bash", "scripts/deploy.sh", action], timeout).stdout

    def compose(self, *args: str, timeout: float = 300) -> str:
        return self._run(["docker", "compose", *args], timeout).stdout

    def exec(self, service: str, *argv: str, timeout: float = 120) -> str:
        return self.compose("exec", "-T", service, *argv, timeout=timeout)

    def json_in_workspace(self, pattern: str) -> list[Any]:
        """Every JSON file matching ``pattern`` under the workspace volume, read inside the code server."""
        program = (
            "import glob, json; print(json.dumps([json.load(open(p)) for p in "
            f"sorted(glob.glob({WORKSPACE + '/' + pattern!r}))]))"
        )
        return json.loads(self.exec("user_code", "python3", "-c", program))

    def psql(self, query: str) -> str:
        return self.exec("postgres", "psql", "-U", "traj2env", "-d", "dagster", "-tAc", query).strip()

    # The GraphQL API, as the UI uses it.
    def client(self) -> DagsterGraphQLClient:
        return DagsterGraphQLClient("127.0.0.1", port_number=self.port, timeout=60)

    def graphql(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        request = urllib.request.Request(f"{self.url}/graphql", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            payload = json.loads(response.read())
        assert "errors" not in payload, payload["errors"]
        return payload["data"]

    def add_partition(self, key: str) -> None:
        data = self.graphql(
            """mutation Add($selector: RepositorySelector!, $key: String!) {
                 addDynamicPartition(repositorySelector: $selector, partitionsDefName: "trajectories",
                                     partitionKey: $key) { __typename ... on PythonError { message } } }""",
            {"selector": {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY}, "key": key},
        )
        assert data["addDynamicPartition"]["__typename"] == "AddDynamicPartitionSuccess", data

    def runs(self, **tags: str) -> list[dict[str, Any]]:
        tag_filter = [{"key": key.replace("__", "/"), "value": value} for key, value in tags.items()]
        result = self.graphql(_RUNS, {"filter": {"tags": tag_filter}})["runsOrError"]
        assert "results" in result, result
        for run in result["results"]:
            run["tags"] = {tag["key"]: tag["value"] for tag in run["tags"]}
        return result["results"]

    def run_status(self, run_id: str) -> str:
        return self.client().get_run_status(run_id).value

    def wait_for_status(self, run_id: str, wanted: set[str], timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            status = self.run_status(run_id)
            if status in wanted or time.monotonic() > deadline:
                return status
            time.sleep(2)

    def wait_for_run(self, timeout: float, after: float = 0.0, **tags: str) -> dict[str, Any]:
        """The first run carrying ``tags`` created after ``after`` (epoch seconds), once it has finished."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            runs = [run for run in self.runs(**tags) if run["creationTime"] > after]
            if runs and runs[-1]["status"] in FINISHED:
                return runs[-1]
            time.sleep(3)
        raise AssertionError(f"no finished run with tags {tags} after {timeout:.0f}s: {self.runs(**tags)}")

    def leftovers(self) -> dict[str, list[str]]:
        def names(*argv: str) -> list[str]:
            return [line for line in self._run(list(argv), 60).stdout.splitlines() if line]

        return {
            "containers": names(
                "docker",
                "ps",
                "-a",
                "--format",
                "{{.Names}}",
                "--filter",
                f"label=com.docker.compose.project={self.name}",
            )
            + names(
                "docker", "ps", "-a", "--format", "{{.Names}}", "--filter", f"label=traj2env.deployment={self.name}"
            ),
            "volumes": [
                v for v in names("docker", "volume", "ls", "--format", "{{.Name}}") if v.startswith(f"{self.name}-")
            ],
            "networks": [
                n
                for n in names("docker", "network", "ls", "--format", "{{.Name}}")
                if n == self.name or n.startswith(f"{self.name}_")
            ],
        }

"""The bundled sample sessions are what the generator really records, in valid shapes."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import atif
import pytest
from harbor.models.trajectories import Trajectory as HarborTrajectory

from traj2env_assets.config import load_run_config

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
TRAJECTORIES_DIR = EXAMPLES_DIR / "trajectories"


def load_generator() -> ModuleType:
    # examples/ is not a package; load the script by path.
    spec = importlib.util.spec_from_file_location("make_samples", EXAMPLES_DIR / "make_samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def committed_files() -> dict[str, bytes]:
    return {
        path.relative_to(TRAJECTORIES_DIR).as_posix(): path.read_bytes()
        for path in sorted(TRAJECTORIES_DIR.rglob("*"))
        if path.is_file()
    }


def installed_node_version() -> str | None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        return None
    return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()


def test_generator_reproduces_committed_samples(tmp_path: Path) -> None:
    generator = load_generator()
    node_version = installed_node_version()
    if node_version != generator.RECORDED_NODE_VERSION:
        pytest.skip(f"samples were recorded with node {generator.RECORDED_NODE_VERSION}, found {node_version}")
    generator.generate(tmp_path)
    regenerated = {
        path.relative_to(tmp_path).as_posix(): path.read_bytes()
        for path in sorted(tmp_path.rglob("*"))
        if path.is_file()
    }
    committed = committed_files()
    assert sorted(regenerated) == sorted(committed)
    differing = [name for name in committed if committed[name] != regenerated[name]]
    assert differing == [], f"rerun examples/make_samples.py; these differ: {differing}"


ATIF_SAMPLES = sorted(TRAJECTORIES_DIR.glob("atif/*.json"))
JSONL_SAMPLES = sorted(TRAJECTORIES_DIR.rglob("*.jsonl"))


def test_every_format_has_every_scenario() -> None:
    scenarios = {path.name.split(".")[0] for path in TRAJECTORIES_DIR.rglob("*.json*")}
    for format_dir in ("atif", "claude-code", "codex", "pi"):
        present = {path.name.split(".")[0] for path in (TRAJECTORIES_DIR / format_dir).iterdir()}
        assert present == scenarios, format_dir


@pytest.mark.parametrize("path", ATIF_SAMPLES, ids=lambda path: path.name)
def test_atif_sample_validates(path: Path) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    atif.Trajectory.model_validate(document)
    HarborTrajectory.model_validate(document)


@pytest.mark.parametrize("path", JSONL_SAMPLES, ids=lambda path: path.relative_to(TRAJECTORIES_DIR).as_posix())
def test_jsonl_sample_lines_parse(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines
    for line in lines:
        assert isinstance(json.loads(line), dict)


# The check runs each scenario records, in order: (command, exit code).
EXPECTED_CHECK_RUNS = {
    "python-pytest-fix": [("python -m pytest -q", 1), ("python -m pytest -q", 0)],
    "node-npm-test-fix": [("npm test", 1), ("npm test", 0)],
    "python-unittest-fix": [("python -m unittest", 1), ("python -m unittest", 0)],
    "python-pytest-config-cheat": [("python -m pytest -q", 1), ("python -m pytest -q", 0)],
    "python-pytest-test-edit": [("python -m pytest -q", 1), ("python -m pytest -q", 0)],
    "node-npm-test-config-cheat": [("npm test", 1), ("npm test", 0)],
    "python-pytest-all-pass": [("python -m pytest -q", 0), ("python -m pytest -q", 0)],
    "python-build-package": [("python -m pytest -q", 0)],
    "python-build-shallow-tests": [("python -m pytest -q", 0)],
    # Multi-request sessions (extend): request 1's run, then request 2's.
    "python-extend-feature": [("python -m pytest -q", 0), ("python -m pytest -q", 0)],
    "python-extend-shared-test-file": [("python -m pytest -q", 0), ("python -m pytest -q", 0)],
    "python-hf-dataset-stats": [("python city_stats.py", 0)],
    "python-deps-pytest-fix": [("python -m pytest -q", 1), ("python -m pytest -q", 0)],
    "node-describe-fix": [("npm test", 1), ("npm test", 0)],
    "python-ruff-fix": [("python -m ruff check .", 1), ("python -m ruff check .", 0)],
}


@pytest.mark.parametrize("path", ATIF_SAMPLES, ids=lambda path: path.name)
def test_atif_sample_records_the_expected_check_runs(path: Path) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    runs = []
    for step in document["steps"]:
        observations = step.get("observation", {}).get("results", [])
        results = {result["source_call_id"]: result for result in observations}
        for call in step.get("tool_calls", []):
            if call["function_name"] == "Bash":
                exit_code = results[call["tool_call_id"]]["extra"]["exit_code"]
                runs.append((call["arguments"]["command"], exit_code))
    assert runs == EXPECTED_CHECK_RUNS[path.stem]


def test_example_config_loads() -> None:
    config = load_run_config(EXAMPLES_DIR / "trajectory-to-env.yaml")
    assert config.source.path == Path("examples/trajectories")
    assert config.pipeline.options.families == ["repair", "build", "extend", "qa"]
    assert config.pipeline.options.jobs == 2


def session_id_of(path: Path) -> str:
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))["session_id"]
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    # Claude Code lines carry sessionId; Codex's first line is session_meta; pi's is the header.
    return first.get("sessionId") or first.get("payload", {}).get("id") or first["id"]


def test_every_sample_has_its_own_session_id() -> None:
    # Repair task ids are <session>-<fix hash>: shared ids would turn the same fix in
    # another format into a duplicate.
    paths = ATIF_SAMPLES + JSONL_SAMPLES
    session_ids = [session_id_of(path) for path in paths]
    assert len(set(session_ids)) == len(paths)


def test_extend_samples_hold_several_user_requests_in_every_format() -> None:
    expected = {"python-extend-feature": 3, "python-extend-shared-test-file": 2}
    for name, requests in expected.items():
        atif_steps = json.loads((TRAJECTORIES_DIR / "atif" / f"{name}.json").read_text())["steps"]
        assert sum(step["source"] == "user" for step in atif_steps) == requests
        claude = [
            json.loads(line) for line in (TRAJECTORIES_DIR / "claude-code" / f"{name}.jsonl").read_text().splitlines()
        ]
        assert (
            sum(line["type"] == "user" and isinstance(line["message"]["content"], str) for line in claude) == requests
        )
        codex = [json.loads(line) for line in (TRAJECTORIES_DIR / "codex" / f"{name}.jsonl").read_text().splitlines()]
        assert sum(line["payload"].get("type") == "task_started" for line in codex) == requests
        pi = [json.loads(line) for line in (TRAJECTORIES_DIR / "pi" / f"{name}.jsonl").read_text().splitlines()]
        assert sum(line.get("message", {}).get("role") == "user" for line in pi) == requests

"""The scan gate's five outcomes, and the blocking set on real sessions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from traj2env_assets import scan_gate
from traj2env_assets.formats.convert import convert_source
from traj2env_assets.formats.stage import convert_partition
from traj2env_assets.scan_gate import scan_trajectory
from traj2env_assets.sources import register_sources
from traj2env_assets.workspace import Workspace
from traj2env_assets_tests.conftest import REAL_FIXTURES


def _doc(*steps: dict) -> dict:
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": "s",
        "agent": {"name": "claude-code", "version": "1"},
        "steps": [{"step_id": i, **step} for i, step in enumerate(steps, start=1)],
    }


def _bash(call_id: str, command: str) -> dict:
    return {
        "source": "agent",
        "message": "",
        "tool_calls": [{"tool_call_id": call_id, "function_name": "Bash", "arguments": {"command": command}}],
        "observation": {"results": [{"source_call_id": call_id, "content": ""}]},
    }


def test_reward_tampering_blocks_with_finding_ids() -> None:
    verdict = scan_trajectory(_doc({"source": "user", "message": "fix it"}, _bash("c1", "echo 1.0 > /logs/verifier/reward.txt")))
    assert verdict.outcome == "blocked"
    assert verdict.reason == "gate"
    assert "tamper.reward_write" in verdict.blocking_ids
    assert not verdict.allows_downstream


def test_writing_own_conftest_is_not_blocking() -> None:
    write = {
        "source": "agent",
        "message": "",
        "tool_calls": [{"tool_call_id": "w", "function_name": "Write", "arguments": {"file_path": "/home/dev/p/tests/conftest.py", "content": "import pytest\n"}}],
        "observation": {"results": [{"source_call_id": "w", "content": "ok"}]},
    }
    verdict = scan_trajectory(_doc({"source": "user", "message": "add tests"}, write))
    assert verdict.outcome == "clean"
    assert "tamper.harness_hooks" in [finding.id for finding in verdict.findings]
    assert verdict.allows_downstream


def test_scanner_error_is_never_clean() -> None:
    duplicate_ids = {
        "source": "agent",
        "message": "",
        "tool_calls": [
            {"tool_call_id": "c1", "function_name": "Bash", "arguments": {"command": "ls"}},
            {"tool_call_id": "c1", "function_name": "Bash", "arguments": {"command": "ls"}},
        ],
    }
    verdict = scan_trajectory(_doc(duplicate_ids))
    assert verdict.outcome == "scan_error"
    assert "duplicate_call_id" in verdict.reason
    assert not verdict.allows_downstream


def test_disabled_and_absent_are_distinguishable() -> None:
    doc = _doc({"source": "user", "message": "hi"})
    assert scan_trajectory(doc, enabled=False).outcome == "disabled"
    assert scan_trajectory(doc, scanner_available=False).outcome == "scanner_absent"
    assert scan_trajectory(doc).outcome == "clean"


@pytest.mark.parametrize(
    "relative",
    ["pi-mono/before-compaction.jsonl", "session-share/general-tool-calls.jsonl", "session-share/edit-tool-variants.jsonl"],
)
def test_ordinary_real_sessions_pass_the_gate(relative: str) -> None:
    trajectory = convert_source(REAL_FIXTURES / relative).trajectory
    verdict = scan_trajectory(trajectory.model_dump(mode="json", exclude_none=True))
    assert verdict.outcome == "clean", verdict.blocking_ids


def test_an_unchanged_trajectory_is_not_scanned_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(REAL_FIXTURES / "session-share" / "edit-tool-variants.jsonl", source)
    workspace = Workspace(root=tmp_path / "ws")
    [key] = register_sources(workspace, source).new
    convert_partition(workspace, key)
    first = scan_gate.scan_partition(workspace, key)

    def no_second_scan(*args: object, **kwargs: object) -> None:
        raise AssertionError("scanned again")

    monkeypatch.setattr(scan_gate, "scan_trajectory", no_second_scan)
    assert scan_gate.scan_partition(workspace, key) == first
    monkeypatch.undo()
    # A different gate setting is a different scan.
    assert scan_gate.scan_partition(workspace, key, enabled=False).outcome == "disabled"

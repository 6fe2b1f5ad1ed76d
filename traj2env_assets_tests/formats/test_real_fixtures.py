"""Every real fixture converts to valid ATIF, or is skipped for a documented reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from harbor.models.trajectories import Trajectory as HarborTrajectory

from traj2env_assets.formats.convert import convert_source
from traj2env_assets_tests.conftest import REAL_FIXTURES

AGENT_LOGS = sorted(
    path
    for path in REAL_FIXTURES.rglob("*")
    if path.is_file() and path.parent.name in {"pi-mono", "session-share", "localpush-codex", "derived-atif"}
)
# The atif-make dataset rows are not agent session logs (ATBench, METR MALT, Inspect, Markdown).
NON_AGENT_FORMATS = {
    "atbench.json": "unrecognised_format",
    "metr-malt.json": "unrecognised_format",
    "inspect-eval.eval": "binary_file",
    "transcript-markdown.md": "unrecognised_format",
}


@pytest.mark.parametrize("path", AGENT_LOGS, ids=lambda p: p.name[:40])
def test_real_agent_log_converts_and_validates_with_harbor(path: Path) -> None:
    result = convert_source(path)
    assert result.record.status == "converted", result.record.detail
    document = result.trajectory.model_dump(mode="json", exclude_none=True)
    harbor_model = HarborTrajectory.model_validate(document)
    assert [step.step_id for step in harbor_model.steps] == list(range(1, len(harbor_model.steps) + 1))
    assert result.record.steps == len(document["steps"]) > 0


@pytest.mark.parametrize("name,reason", sorted(NON_AGENT_FORMATS.items()))
def test_non_agent_dataset_rows_are_skipped_with_reason(name: str, reason: str) -> None:
    result = convert_source(REAL_FIXTURES / "atif-make-fixtures" / name)
    assert result.record.status == "skipped"
    assert result.record.reason == reason
    assert result.trajectory is None


def test_claude_code_repeated_history_is_deduplicated() -> None:
    trajectory = convert_source(REAL_FIXTURES / "session-share" / "general-tool-calls.jsonl").trajectory
    call_ids = [call.tool_call_id for step in trajectory.steps for call in step.tool_calls or []]
    assert len(call_ids) == len(set(call_ids)) == 65
    assert trajectory.extra["duplicate_tool_calls"] == 45


def test_claude_code_edit_keeps_pre_image_and_cwd() -> None:
    trajectory = convert_source(REAL_FIXTURES / "session-share" / "edit-tool-variants.jsonl").trajectory
    edits = [call for step in trajectory.steps for call in step.tool_calls or [] if call.function_name == "Edit"]
    assert len(edits) == 4
    assert edits[0].extra["cwd"] == "/Users/pete/git/moredip/session-share/e2e-tests"
    results = [r for step in trajectory.steps for r in (step.observation.results if step.observation else [])]
    pre_images = [r.extra["original_file"] for r in results if r.extra and "original_file" in r.extra]
    assert len(pre_images) == 4
    assert "It contains the word hello in the middle." in pre_images[0]


def test_claude_code_read_without_structured_result_invents_nothing() -> None:
    trajectory = convert_source(REAL_FIXTURES / "session-share" / "read-tool-variants.jsonl").trajectory
    results = [r for step in trajectory.steps for r in (step.observation.results if step.observation else [])]
    assert len(results) == 4
    assert all(r.content.startswith("  ") and "\u2192" in r.content for r in results)
    assert all("file_content" not in (r.extra or {}) for r in results)


def test_pi_failing_check_keeps_exit_code() -> None:
    trajectory = convert_source(REAL_FIXTURES / "pi-mono" / "before-compaction.jsonl").trajectory
    checks = []
    for step in trajectory.steps:
        results = {r.source_call_id: r for r in (step.observation.results if step.observation else [])}
        for call in step.tool_calls or []:
            if call.function_name == "bash" and call.arguments.get("command", "").endswith("&& npm run check"):
                checks.append((results[call.tool_call_id].extra or {}).get("exit_code"))
    assert 1 in checks or 2 in checks
    assert None in checks, "successful runs carry no invented exit code"
    assert trajectory.agent.extra["cwd"] == "/Users/badlogic/workspaces/pi-mono"


def test_pi_user_shell_commands_become_system_steps() -> None:
    trajectory = convert_source(REAL_FIXTURES / "pi-mono" / "before-compaction.jsonl").trajectory
    user_shell = [step for step in trajectory.steps if step.extra and "user_shell_command" in step.extra]
    assert len(user_shell) == 3
    assert all(step.source == "system" for step in user_shell)
    assert user_shell[0].observation.results[0].extra["exit_code"] == 0


def test_codex_redacted_rollout_keeps_tool_names_and_cwd() -> None:
    path = REAL_FIXTURES / "localpush-codex" / "rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl"
    trajectory = convert_source(path).trajectory
    names = [call.function_name for step in trajectory.steps for call in step.tool_calls or []]
    assert names.count("exec_command") == 71
    assert names.count("apply_patch") == 22
    assert names.count("write_stdin") == 9
    assert trajectory.session_id == "019c8a4c-ed82-79a1-aa28-7738fc5ab61a"
    assert all(
        call.extra["cwd"] == "/redacted/path/fa3f7eaace"
        for step in trajectory.steps
        for call in step.tool_calls or []
        if call.function_name == "apply_patch"
    )

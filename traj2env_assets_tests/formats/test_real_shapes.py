"""Conversion of the real shapes (``real_shapes.py``: logs of our own making that copy the
quirks of real public sessions; the real ones are checked by ``corpus/test_real_corpus.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from atif import Trajectory
from harbor.models.trajectories import Trajectory as HarborTrajectory

from traj2env_assets.formats.convert import convert_source
from traj2env_assets_tests.formats import real_shapes
from traj2env_assets_tests.formats.real_shapes import WRITERS
from traj2env_assets_tests.loaded_logs import load_trajectory, npm_check_exit_codes


def _results(trajectory: Trajectory) -> list:
    return [r for step in trajectory.steps for r in (step.observation.results if step.observation else [])]


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_each_shape_converts_and_validates_with_harbor(tmp_path: Path, name: str) -> None:
    result = convert_source(WRITERS[name](tmp_path / name))
    assert result.record.status == "converted", result.record.detail
    assert result.trajectory is not None
    document = result.trajectory.model_dump(mode="json", exclude_none=True)
    steps = HarborTrajectory.model_validate(document).steps
    assert [step.step_id for step in steps] == list(range(1, len(steps) + 1))
    assert result.record.steps == len(document["steps"]) > 0


def test_claude_code_repeated_history_is_deduplicated(tmp_path: Path) -> None:
    trajectory = load_trajectory(real_shapes.claude_repeated_history(tmp_path / "s.jsonl"))
    call_ids = [call.tool_call_id for step in trajectory.steps for call in step.tool_calls or []]
    assert len(call_ids) == len(set(call_ids)) == 6
    assert trajectory.extra is not None
    assert trajectory.extra["duplicate_tool_calls"] == 4


def test_claude_code_edit_keeps_pre_image_and_cwd(tmp_path: Path) -> None:
    trajectory = load_trajectory(real_shapes.claude_edit_variants(tmp_path / "s.jsonl"))
    edits = [call for step in trajectory.steps for call in step.tool_calls or [] if call.function_name == "Edit"]
    assert len(edits) == 4
    assert edits[0].extra is not None
    assert edits[0].extra["cwd"] == real_shapes.CLAUDE_CWD
    pre_images = [r.extra["original_file"] for r in _results(trajectory) if r.extra and "original_file" in r.extra]
    assert pre_images[0] == real_shapes.EDIT_FILES["edit_basic.txt"]
    assert len(pre_images) == 4


def test_claude_code_read_without_structured_result_invents_nothing(
    tmp_path: Path,
) -> None:
    results = _results(load_trajectory(real_shapes.claude_read_variants(tmp_path / "s.jsonl")))
    assert len(results) == 4
    assert all(r.content.startswith("  ") and "\u2192" in r.content for r in results)
    assert all("file_content" not in (r.extra or {}) for r in results)


def test_pi_failing_check_keeps_exit_code(tmp_path: Path) -> None:
    trajectory = load_trajectory(real_shapes.pi_legacy_compaction(tmp_path / "s.jsonl"))
    checks = npm_check_exit_codes(trajectory)
    assert checks == [2, None], "successful runs carry no invented exit code"
    assert trajectory.agent.extra is not None
    assert trajectory.agent.extra["cwd"] == real_shapes.PI_CWD
    assert trajectory.session_id == real_shapes.PI_SESSION


def test_pi_user_shell_commands_become_system_steps(tmp_path: Path) -> None:
    trajectory = load_trajectory(real_shapes.pi_legacy_compaction(tmp_path / "s.jsonl"))
    user_shell = [step for step in trajectory.steps if step.extra and "user_shell_command" in step.extra]
    assert len(user_shell) == 2
    assert all(step.source == "system" for step in user_shell)
    observation = user_shell[0].observation
    assert observation is not None and observation.results[0].extra is not None
    assert observation.results[0].extra["exit_code"] == 0


def test_codex_redacted_rollout_keeps_tool_names_and_cwd(tmp_path: Path) -> None:
    trajectory = load_trajectory(real_shapes.codex_redacted(tmp_path / "s.jsonl"))
    names = [call.function_name for step in trajectory.steps for call in step.tool_calls or []]
    assert (
        names.count("exec_command"),
        names.count("apply_patch"),
        names.count("write_stdin"),
    ) == (2, 2, 1)
    assert trajectory.session_id == real_shapes.CODEX_SESSION
    patches = [
        call for step in trajectory.steps for call in step.tool_calls or [] if call.function_name == "apply_patch"
    ]
    assert [call.extra and call.extra["cwd"] for call in patches] == [real_shapes.CODEX_CWD] * 2

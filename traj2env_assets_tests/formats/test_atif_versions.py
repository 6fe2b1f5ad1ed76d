"""ATIF input documents of v1.7 and v1.8 are read, and what the conversion stage writes
validates with Harbor's trajectory models and passes atif-scan's parser.

The v1.8 document carries the field 1.8 added: an ``audio`` content part (``AudioSource``
with ``duration_sec``) in a multimodal user message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harbor.models.trajectories import Trajectory as HarborTrajectory

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.stages.convert.conversion import trajectory_json
from traj2env_assets.stages.scan import gate as scan_gate

AUDIO_PART = {"type": "audio", "source": {"media_type": "audio/x-wav", "path": "voice/ask.wav", "duration_sec": 2.5}}


def _document(version: str, user_message: object) -> dict:
    return {
        "schema_version": version,
        "session_id": f"session-{version}",
        "agent": {"name": "claude-code", "version": "2.1.0", "model_name": "claude-sonnet-4-5"},
        "steps": [
            {"step_id": 1, "source": "user", "message": user_message},
            {
                "step_id": 2,
                "source": "agent",
                "message": "Running the tests.",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "Bash", "arguments": {"command": "pytest -q"}}],
                "observation": {"results": [{"source_call_id": "c1", "content": "1 passed"}]},
            },
        ],
    }


DOCUMENTS = {
    "ATIF-v1.7": _document("ATIF-v1.7", "Fix the failing test."),
    "ATIF-v1.8": _document("ATIF-v1.8", [{"type": "text", "text": "Fix the failing test."}, AUDIO_PART]),
}


@pytest.mark.parametrize("version", sorted(DOCUMENTS))
def test_atif_input_is_read_and_written_valid_for_harbor(tmp_path: Path, version: str) -> None:
    source = tmp_path / "session.json"
    source.write_text(json.dumps(DOCUMENTS[version]), encoding="utf-8")

    result = convert_source(source)

    assert result.record.status == "converted", result.record.detail
    assert result.record.format == "atif"
    assert result.trajectory is not None
    written = trajectory_json(result.trajectory)
    harbor = HarborTrajectory.model_validate_json(written)
    assert harbor.schema_version == version
    assert [step.step_id for step in harbor.steps] == [1, 2]
    if version == "ATIF-v1.8":
        audio = harbor.steps[0].message[1]
        # The alias is normalised and the 1.8 field survives the round trip.
        assert (audio.type, audio.source.media_type, audio.source.duration_sec) == ("audio", "audio/wav", 2.5)
    verdict = scan_gate.scan_trajectory(json.loads(written))
    assert verdict.outcome == "clean", verdict


def test_an_audio_part_is_rejected_with_a_reason_when_malformed(tmp_path: Path) -> None:
    broken = dict(AUDIO_PART, source={"media_type": "audio/wav", "path": "a.wav", "duration_sec": -1})
    source = tmp_path / "session.json"
    source.write_text(json.dumps(_document("ATIF-v1.8", [broken])), encoding="utf-8")

    result = convert_source(source)

    assert (result.record.status, result.record.reason) == ("skipped", "invalid_trajectory")

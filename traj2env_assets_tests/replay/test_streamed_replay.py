"""A large trajectory is replayed a step at a time: the same record as a whole-document replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.replay import ReplayRecord, replay_trajectory, stream, write_record
from traj2env_assets.replay.engine import replay_streamed
from traj2env_assets.replay.stream import StepsNotLast, StreamError, read_streamed
from traj2env_assets.stages.convert.conversion import trajectory_json
from traj2env_assets_tests.formats import real_shapes


def _records(directory: Path) -> tuple[dict, list[str]]:
    record = json.loads((directory / "record.json").read_text(encoding="utf-8"))
    manifests = (directory / "manifests.jsonl").read_text(encoding="utf-8").splitlines()
    return record, manifests


@pytest.mark.parametrize(
    ("name", "steps_last"),
    [("pi-legacy-compaction.jsonl", True), ("claude-repeated-history.jsonl", False), ("codex-redacted.jsonl", True)],
)
def test_streamed_replay_writes_the_same_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, steps_last: bool
) -> None:
    trajectory = convert_source(real_shapes.WRITERS[name](tmp_path / name)).trajectory
    assert trajectory is not None
    path = tmp_path / "trajectory.json"
    # As the conversion stage writes it (steps last), or as ATIF orders it (steps first).
    text = trajectory_json(trajectory) if steps_last else trajectory.model_dump_json(exclude_none=True)
    path.write_text(text, encoding="utf-8")
    # Small windows: values are cut at chunk edges all the time.
    monkeypatch.setattr(stream, "CHUNK_CHARS", 4096)

    write_record(replay_trajectory(trajectory), tmp_path / "whole")
    spill = tmp_path / "spill"
    spill.mkdir()
    write_record(replay_streamed(read_streamed(path, steps_last=steps_last), spill), tmp_path / "streamed")
    # As the replay stage does it: the record goes where the timeline was spilled, so the
    # spill is finished in place rather than copied.
    in_place = tmp_path / "in_place"
    in_place.mkdir()
    write_record(replay_streamed(read_streamed(path, steps_last=steps_last), in_place), in_place)

    assert _records(tmp_path / "streamed") == _records(tmp_path / "whole")
    assert list(spill.iterdir()) == []
    whole = (tmp_path / "whole" / "record.json").read_bytes()
    assert (tmp_path / "streamed" / "record.json").read_bytes() == whole
    assert (in_place / "record.json").read_bytes() == whole
    assert sorted(p.name for p in in_place.iterdir()) == sorted(p.name for p in (tmp_path / "whole").iterdir())
    loaded = ReplayRecord.load(tmp_path / "streamed")
    assert loaded.fidelity.events == len(loaded.timeline) > 0


def test_steps_before_other_keys_are_read_in_two_passes(tmp_path: Path) -> None:
    trajectory = convert_source(real_shapes.claude_edit_variants(tmp_path / "edits.jsonl")).trajectory
    assert trajectory is not None
    document = trajectory.model_dump(mode="json", exclude_none=True)
    steps = document.pop("steps")
    step_ids = [step.step_id for step in trajectory.steps]
    last = tmp_path / "steps_last.json"
    last.write_text(json.dumps({**document, "steps": steps}), encoding="utf-8")
    first = tmp_path / "steps_first.json"
    first.write_text(json.dumps({"steps": steps, **document}), encoding="utf-8")
    for path, hint in ((last, True), (last, False), (first, False)):
        streamed = read_streamed(path, steps_last=hint)
        assert streamed.header.extra == trajectory.extra
        assert [step.step_id for step in streamed.steps()] == step_ids
    # A wrong hint is noticed, not silently missing the keys after the steps.
    with pytest.raises(StepsNotLast):
        list(read_streamed(first, steps_last=True).steps())


@pytest.mark.parametrize("text", ['{"steps": [{"step_id": 1', '{"session_id": "x"}', "[]"])
def test_broken_documents_are_stream_errors(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(StreamError):
        list(read_streamed(path).steps())

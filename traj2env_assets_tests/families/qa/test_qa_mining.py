"""qa mining: a tool output computed from hub dataset files, dated with a timezone."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.families.qa.candidates import mine_qa_candidates
from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record
from traj2env_assets_tests.replay.builders import SessionBuilder

FORMATS = (
    "atif/python-hf-dataset-stats.json",
    "claude-code/python-hf-dataset-stats.jsonl",
    "codex/python-hf-dataset-stats.jsonl",
    "pi/python-hf-dataset-stats.jsonl",
)
SCRIPT = 'import pandas as pd\nprint(pd.read_parquet("hf://datasets/acme/weather/data/train.parquet").mean())\n'


@pytest.mark.parametrize("relative", FORMATS)
def test_the_sample_session_gives_one_dated_candidate_in_every_format(sample_record, relative: str) -> None:
    mined = mine_qa_candidates(sample_record(relative), "key")
    assert len(mined) == 1
    candidate = mined[0].candidate
    assert mined[0].drop is None
    assert len(candidate.task_id) == 12 and int(candidate.task_id, 16) >= 0
    assert candidate.command == "python city_stats.py"
    assert "Reykjavik     4.325" in candidate.output
    assert list(candidate.scripts) == ["city_stats.py"]
    assert candidate.timestamp is not None and candidate.timestamp.startswith("2026-03-01T")
    assert "THE CANDIDATE OUTPUT" in candidate.context


def test_repair_samples_give_no_qa_candidate(sample_record) -> None:
    assert mine_qa_candidates(sample_record("atif/python-pytest-fix.json"), "key") == []


def _mine(tmp_path: Path, builder: SessionBuilder) -> list:
    write_record(replay_trajectory(builder.build()), tmp_path / "record")
    return mine_qa_candidates(ReplayRecord.load(tmp_path / "record"), "key")


def _session(timestamp: str | None) -> SessionBuilder:
    builder = SessionBuilder().user("How warm is it on average?")
    builder.call("Write", {"file_path": "/home/dev/proj/stats.py", "content": SCRIPT}, "File created")
    builder.bash("python stats.py", "temp    21.5\n")
    builder.bash("python other.py", "temp    21.5\n")  # reads no hub data: not a candidate
    builder.bash(
        "python -c 'from datasets import load_dataset; print(len(load_dataset(\"acme/x\")))'",
        "",
    )
    if timestamp is None:
        builder.steps[0].pop("timestamp")
    else:
        builder.steps[0]["timestamp"] = timestamp
    return builder


def test_a_script_named_by_the_command_that_reads_hub_data_makes_a_candidate(tmp_path: Path) -> None:
    mined = _mine(tmp_path, _session("2026-03-01T10:00:00+02:00"))
    assert [m.candidate.command for m in mined] == ["python stats.py"]  # empty output is no fact
    assert mined[0].drop is None
    assert mined[0].candidate.hub_references == ["acme/weather/data/train.parquet"]


def test_missing_trajectory_date(tmp_path: Path) -> None:
    mined = _mine(tmp_path, _session(None))
    assert [m.drop.reason for m in mined if m.drop] == ["missing_trajectory_date"]


def test_missing_trajectory_timezone(tmp_path: Path) -> None:
    mined = _mine(tmp_path, _session("2026-03-01T10:00:00"))
    assert [m.drop.reason for m in mined if m.drop] == ["missing_trajectory_timezone"]

"""``STAGES`` is the one ordered list of stages: the asset graph, the per-trajectory job, the
candidates' status names and the table in docs/stages.md all follow it."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import dagster as dg

import traj2env_assets.stages
from traj2env_assets.definitions import defs, stage_assets
from traj2env_assets.defs.jobs import PIPELINE_JOB
from traj2env_assets.families.registry import registered_families
from traj2env_assets.lifecycle.status import CandidateStatus
from traj2env_assets.stage_names import CANDIDATE_STAGES, PER_TRAJECTORY_STAGES, STAGES
from traj2env_assets.stages.report.report import CandidateRecord

STAGES_DOC = Path(__file__).parents[1] / "docs" / "stages.md"


def _stage_of(key: dg.AssetKey) -> str:
    """A stage asset's stage: its key's first part (``candidates/<family>`` → ``candidates``)."""
    return key.path[0]


def test_the_stages_in_order() -> None:
    assert STAGES == (
        "convert",
        "scan",
        "replay",
        "candidates",
        "proposals",
        "images",
        "calibration",
        "trials",
        "publish",
        "report",
    )
    assert STAGES[3:9] == CANDIDATE_STAGES and STAGES[:-1] == PER_TRAJECTORY_STAGES


def test_the_definitions_have_one_asset_per_stage_and_one_candidates_asset_per_family() -> None:
    families = registered_families()
    keys = [key for asset in stage_assets(families) for key in asset.keys]
    assert list(dict.fromkeys(_stage_of(key) for key in keys)) == list(PER_TRAJECTORY_STAGES)
    assert [key for key in keys if _stage_of(key) == "candidates"] == [
        dg.AssetKey(["candidates", name]) for name in families.names()
    ]
    assert dg.AssetKey("report") in defs.resolve_asset_graph().get_all_asset_keys()


def test_the_per_trajectory_job_selects_every_stage_but_the_report() -> None:
    selected = defs.resolve_job_def(PIPELINE_JOB).asset_layer.selected_asset_keys
    assert selected == {key for asset in stage_assets(registered_families()) for key in asset.keys}


def test_the_stages_table_lists_the_stages_in_order() -> None:
    rows = re.findall(r"^\| `([^`]+)` \|", STAGES_DOC.read_text(encoding="utf-8").split("\n## ")[0], re.MULTILINE)
    assert [row.split("/")[0] for row in rows] == list(STAGES)


def _status(**recorded: str) -> CandidateStatus:
    return CandidateStatus.model_validate(
        {"family": "repair", "partition_key": "k", "task_id": "t", "reward_kind": "binary", **recorded}
    )


def test_status_and_report_files_with_the_former_stage_names_still_load() -> None:
    # Written before the stages were named for their folders: mining, proposal, image.
    assert _status(reached="mining").reached == "candidates"
    assert (_status(reached="proposal", dropped_at="image").reached, _status(dropped_at="image").dropped_at) == (
        "proposals",
        "images",
    )
    assert _status(reached="calibration").reached == "calibration"
    record = CandidateRecord.model_validate(
        {
            "family": "repair",
            "task_id": "t",
            "partition_key": "k",
            "status": "dropped",
            "kept": False,
            "dropped_at": "mining",
            "reward_kind": "binary",
        }
    )
    assert record.dropped_at == "candidates"


def test_every_stage_is_a_folder_with_its_asset_module() -> None:
    folder = Path(traj2env_assets.stages.__file__).parent
    assert sorted(path.name for path in folder.iterdir() if (path / "__init__.py").is_file()) == sorted(STAGES)
    for stage in STAGES:
        assert callable(importlib.import_module(f"traj2env_assets.stages.{stage}.asset").assets), stage

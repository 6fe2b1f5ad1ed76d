"""One task per fix: the copies of one piece of work are dropped as ``duplicate_of`` the first.

The sessions are the bundled samples (of the project's own making): each is logged in four
formats with the same pre-state, fix and check, so each is one piece of work four times.
The stages up to mining run for real (conversion, scan gate, replay, mining); no Docker.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from traj2env_assets.config import PipelineOptions
from traj2env_assets.families.registry import Families
from traj2env_assets.families.repair.family import RepairFamily
from traj2env_assets.layout import Workspace
from traj2env_assets.lifecycle.status import CandidateStatus, read_status, save_status, staged_task_dir, statuses_of
from traj2env_assets.llm.client import LlmClient
from traj2env_assets.quality.duplicates import FixClaim, FixClaims
from traj2env_assets.sources import load_registry, register_sources
from traj2env_assets.stages.candidates.mining import mine_partition
from traj2env_assets.stages.convert.conversion import convert_partition
from traj2env_assets.stages.proposals.proposals import propose
from traj2env_assets.stages.publish.publishing import publish
from traj2env_assets.stages.replay.partition import replay_partition
from traj2env_assets.stages.report.report import build_run_report
from traj2env_assets.stages.scan.gate import scan_partition
from traj2env_assets_tests.example_run import SAMPLES

FORMATS = (
    "atif/python-pytest-fix.json",
    "claude-code/python-pytest-fix.jsonl",
    "codex/python-pytest-fix.jsonl",
    "pi/python-pytest-fix.jsonl",
)
# The codex log's failing run of the check is the earliest recording of the fix.
EARLIEST = "codex"
REPAIR = RepairFamily()
# The families these tests run: repair alone, as a run that selects it.
REPAIR_ONLY = Families([REPAIR])


def _registered(root: Path, sessions: tuple[str, ...]) -> tuple[Workspace, dict[str, str]]:
    """The sessions registered in a new workspace; their partition keys by format."""
    source = root / "sessions"
    for session in sessions:
        (source / session).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLES / session, source / session)
    workspace = Workspace(root=root / "workspace")
    register_sources(workspace, source)
    formats = {key: Path(item.path).parent.name for key, item in load_registry(workspace).sources.items()}
    return workspace, {fmt: key for key, fmt in formats.items()}


def _mine(workspace: Workspace, keys: list[str]) -> None:
    for key in keys:
        convert_partition(workspace, key)
        scan_partition(workspace, key)
        replay_partition(workspace, key)
        mine_partition(workspace, REPAIR, key)


def _propose(workspace: Workspace, keys: list[str]) -> None:
    """The stage after mining (repair asks no model): it asks again which copy wins."""
    propose(workspace, REPAIR_ONLY, PipelineOptions(), list(statuses_of(workspace, ["repair"], keys)), _no_model)


def _no_model() -> LlmClient:
    raise AssertionError("repair asks no model")


def _repair_statuses(workspace: Workspace, keys: list[str]) -> dict[str, CandidateStatus]:
    return {status.partition_key: status for status in statuses_of(workspace, ["repair"], keys)}


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_one_fix_logged_in_four_formats_is_one_candidate_whichever_is_mined_first(tmp_path: Path, order: str) -> None:
    workspace, by_format = _registered(tmp_path, FORMATS)
    keys = sorted(by_format.values(), reverse=order == "reverse")
    _mine(workspace, keys)
    _propose(workspace, keys)

    statuses = _repair_statuses(workspace, keys)
    winner = statuses[by_format[EARLIEST]]
    assert winner.drop is None and winner.reached == "proposals"
    copies = [status for key, status in statuses.items() if key != by_format[EARLIEST]]
    assert len(copies) == 3
    for copy in copies:
        assert copy.drop is not None and copy.drop.reason == "duplicate_of"
        assert copy.dropped_at in ("candidates", "proposals") and copy.work_key == winner.work_key
    # Mined after the earliest recording, a copy is dropped at once and names it.
    for key in keys[keys.index(by_format[EARLIEST]) + 1 :]:
        assert (statuses[key].dropped_at, statuses[key].duplicate_of) == ("candidates", winner.task_id)

    # The report names the task each copy ends at, and lists the copies under it.
    report = build_run_report(workspace, REPAIR_ONLY.names(), keys)
    listed = {c.task_id: c for c in report.candidates}
    assert sorted(listed[winner.task_id].duplicates) == sorted(copy.task_id for copy in copies)
    assert {listed[copy.task_id].duplicate_of for copy in copies} == {winner.task_id}
    assert report.totals_by_reason["duplicate_of"] == 3


def test_a_session_mined_again_with_another_fix_releases_its_claim(tmp_path: Path) -> None:
    workspace, by_format = _registered(tmp_path, FORMATS[:2])
    atif, claude = by_format["atif"], by_format["claude-code"]
    _mine(workspace, [atif, claude])
    [winner] = [s for s in _repair_statuses(workspace, [atif, claude]).values() if s.drop is None]
    assert winner.work_key is not None
    claims = FixClaims(workspace.dedupe_dir)
    assert {c.task_id for c in claims.claims(winner.work_key)} == {
        s.task_id for s in _repair_statuses(workspace, [atif, claude]).values()
    }

    # The winner's log now holds another session: its mining no longer finds this fix.
    other = SAMPLES / "atif" / "python-unittest-fix.json"
    source = Path(load_registry(workspace).sources[atif].path)
    source.write_bytes(other.read_bytes())
    register_sources(workspace, source.parent.parent)
    _mine(workspace, [atif])

    assert winner.task_id not in {c.task_id for c in claims.claims(winner.work_key)}


def test_a_candidate_that_won_at_mining_is_not_published_beside_an_earlier_copy(tmp_path: Path) -> None:
    # The later recording is mined (and wins) alone; the earlier one is mined after it.
    workspace, by_format = _registered(tmp_path, ("claude-code/python-pytest-fix.jsonl",))
    [late_key] = by_format.values()
    _mine(workspace, [late_key])
    late = _repair_statuses(workspace, [late_key])[late_key]
    assert late.drop is None and late.work_key

    early = FixClaim(
        task_id="codex-python-pytest-fix-0", partition_key="codex-session", started_at="2026-03-01T10:00:08.618Z"
    )
    FixClaims(workspace.dedupe_dir).claim(late.work_key, early)
    staged_task_dir(workspace, late.ref).mkdir(parents=True)
    ready = save_status(workspace, late.model_copy(update={"reached": "trials"}))

    [outcome] = publish(workspace, tmp_path / "dataset", [ready])

    assert outcome.drop is not None and outcome.drop.reason == "duplicate_of" and outcome.dropped_at == "publish"
    assert outcome.duplicate_of == early.task_id
    assert read_status(workspace, late.ref).duplicate_of == early.task_id
    assert not (tmp_path / "dataset" / late.task_id).exists()


def test_a_published_claim_wins_over_an_earlier_recording() -> None:
    published = FixClaim(task_id="b", partition_key="k2", started_at="2026-03-02T00:00:00Z", published=True)
    earlier = FixClaim(task_id="a", partition_key="k1", started_at="2026-03-01T00:00:00Z")
    assert min([earlier, published], key=FixClaim.order) == published


def test_recordings_are_ordered_by_their_instant_not_their_text() -> None:
    # As text "…09Z" sorts after "…09.600Z"; as instants it is 600 ms earlier.
    whole = FixClaim(task_id="z", partition_key="z", started_at="2026-03-01T10:00:09Z")
    later = FixClaim(task_id="a", partition_key="a", started_at="2026-03-01T10:00:09.600Z")
    unknown = FixClaim(task_id="0", partition_key="0")
    assert sorted([unknown, later, whole], key=FixClaim.order) == [whole, later, unknown]

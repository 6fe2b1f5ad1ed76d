"""The funnel per family and the skip reasons, from a report with candidates at every stage."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from traj2env_assets.lifecycle.status import Stage
from traj2env_assets.sources import RejectedSource
from traj2env_assets.stages.report.funnel import (
    FUNNEL_STAGES,
    funnel_frame,
    progress_counts,
    skip_reasons_frame,
    write_funnel_files,
)
from traj2env_assets.stages.report.report import CandidateRecord, InputRecord, RunReport


def _candidate(
    family: str, reached: Stage | None, dropped_at: Stage | None = None, reason: str | None = None
) -> CandidateRecord:
    return CandidateRecord(
        family=family,
        task_id=f"{family}-{reached}-{dropped_at}",
        partition_key="k1",
        status="dropped" if reason else ("published" if reached == "publish" else f"passed_{reached}"),
        kept=reached == "publish",
        reached=reached,
        dropped_at=dropped_at,
        reason=reason,
        reward_kind="binary",
    )


def _report() -> RunReport:
    inputs = [
        InputRecord(path="a", partition_key="k1", status="converted", scan_outcome="clean"),
        InputRecord(
            path="b",
            partition_key="k2",
            status="converted",
            scan_outcome="clean",
            mining_skipped={"repair": "no_candidate", "toy": "no_candidate"},
        ),
        InputRecord(path="c", partition_key="k3", status="skipped", reason="gate", scan_outcome="blocked"),
        InputRecord(path="d", partition_key="k4", status="skipped", reason="no_steps"),
    ]
    candidates = [
        _candidate("repair", "publish"),
        _candidate("repair", "calibration", "trials", "trials_failed"),
        _candidate("repair", "images", "calibration", "calibration_failed"),
        _candidate("repair", "proposals", "images", "image_build_failed"),
        _candidate("repair", None, "candidates", "check_not_verifiable"),
        _candidate("toy", "calibration", "trials", "trials_failed"),
        _candidate("toy", None, "candidates", "duplicate_of").model_copy(
            update={"duplicate_of": "toy-calibration-trials"}
        ),
    ]
    rejected = [RejectedSource(path=name, reason="empty_file", detail="") for name in ("e", "f")]
    return RunReport(generated_at="now", workspace="/w", inputs=inputs, rejected_inputs=rejected, candidates=candidates)


def test_funnel_counts_each_stage_per_family() -> None:
    funnel = funnel_frame(_report())
    assert list(funnel.index) == list(FUNNEL_STAGES) and list(funnel.columns) == ["repair", "toy"]
    assert funnel["repair"].tolist() == [6, 3, 2, 5, 5, 3, 2, 2, 1, 0, 0]
    # The copy of another candidate's work counts as a candidate, not as a distinct one.
    assert funnel["toy"].tolist() == [6, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0]
    assert progress_counts(_report()) == {"converted": 3, "candidates": 7, "built": 4, "tried": 3, "published": 1}


def test_skip_reasons_most_frequent_first_with_family_and_stage() -> None:
    skips = skip_reasons_frame(_report())
    rows = list(skips.itertuples(index=False, name=None))
    assert rows[0] == ("", "input", "empty_file", 2)
    assert ("", "gate", "gate", 1) in rows and ("", "conversion", "no_steps", 1) in rows
    assert ("toy", "trials", "trials_failed", 1) in rows and ("toy", "candidates", "no_candidate", 1) in rows
    assert ("repair", "candidates", "check_not_verifiable", 1) in rows
    assert skips["count"].is_monotonic_decreasing and len(rows) == 11


def test_funnel_files_agree_with_the_frames(tmp_path: Path) -> None:
    files = write_funnel_files(_report(), tmp_path)
    written = pd.read_csv(files.csv, index_col="stage")
    assert written.equals(funnel_frame(_report()))
    markdown = files.markdown.read_text()
    assert re.search(r"\| published +\| +1 \| +0 \|", markdown) and "trials_failed" in markdown
    assert files.png.read_bytes().startswith(b"\x89PNG")


def test_an_empty_run_still_has_a_funnel_and_no_skip_reasons(tmp_path: Path) -> None:
    empty = RunReport(generated_at="now", workspace="/w")
    assert funnel_frame(empty).loc["inputs"].tolist() == [0] * len(funnel_frame(empty).columns)
    assert skip_reasons_frame(empty).empty
    assert "none" in write_funnel_files(empty, tmp_path).markdown.read_text()

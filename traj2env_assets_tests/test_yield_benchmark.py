"""benchmarks/yield.py reads a run report: the funnel by stage and one example per drop reason."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from traj2env_assets.replay import ReplayFidelity
from traj2env_assets.sources import RejectedSource
from traj2env_assets.stages.report.report import CandidateRecord, InputRecord, RunReport

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "yield.py"


def _load() -> ModuleType:
    # benchmarks/ is not a package (and `yield` is a keyword): load the script by path.
    spec = importlib.util.spec_from_file_location("benchmark_yield", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _candidate(task_id: str, **fields: object) -> CandidateRecord:
    return CandidateRecord.model_validate(
        {
            "family": "repair",
            "task_id": task_id,
            "partition_key": "k1",
            "status": "dropped",
            "kept": False,
            "reward_kind": "binary",
            **fields,
        }
    )


def test_funnel_reasons_and_fidelity_from_a_report(tmp_path: Path) -> None:
    candidate_file = tmp_path / "candidate.json"
    candidate_file.write_text(json.dumps({"fail_command_index": 4, "pass_command_index": 9, "check": "pytest"}))
    report = RunReport(
        generated_at="2026-12-04T00:00:00Z",
        workspace=str(tmp_path),
        inputs=[
            InputRecord(
                path="/logs/a.jsonl",
                partition_key="k1",
                status="converted",
                replay_fidelity=ReplayFidelity(files_lost=2, edits_failed_by_reason={"file_unknown": 3}),
            ),
            InputRecord(
                path="/logs/b.jsonl",
                partition_key="k2",
                status="skipped",
                reason="unrecognised_format",
                detail="not an agent log",
            ),
        ],
        rejected_inputs=[RejectedSource(path="/logs/dir.json", reason="not_a_regular_file", detail="a directory")],
        candidates=[
            _candidate(
                "t1",
                dropped_at="calibration",
                reason="check_fails_differently",
                detail="first",
                evidence={"candidate": str(candidate_file)},
            ),
            _candidate("t2", dropped_at="calibration", reason="check_fails_differently", detail="second"),
            _candidate("t3", dropped_at="candidates", reason="fix_files_lost", detail="lost"),
            _candidate("t4", status="published", kept=True, reached="publish", published_path="/tasks/t4"),
        ],
    )
    benchmark = _load()
    assert [benchmark.furthest_stage(c) for c in report.candidates] == [2, 2, -1, 5]
    reasons = benchmark.drop_reasons(report)
    first = reasons[0]
    assert (first.family, first.stage, first.reason, first.count) == (
        "repair",
        "calibration",
        "check_fails_differently",
        2,
    )
    assert first.example == ("/logs/a.jsonl", "fail_command_index=4 pass_command_index=9", "first")
    assert {(r.family, r.stage, r.reason) for r in reasons[1:]} == {
        ("repair", "candidates", "fix_files_lost"),
        ("", "conversion", "unrecognised_format"),
        ("", "input", "not_a_regular_file"),
    }
    rows = [
        list(row)
        for row in zip(*(column.cells for column in benchmark.funnel_table(report, ["repair"]).columns), strict=True)
    ]
    assert rows[0] == ["found", "4"]
    assert dict(rows[1:]) == {
        "candidates": "3",
        "proposals": "3",
        "images": "3",
        "calibration": "1",
        "trials": "1",
        "publish": "1",
    }
    fidelity = benchmark.fidelity_table(report.inputs)
    figures = dict(zip(fidelity.columns[0].cells, fidelity.columns[1].cells, strict=True))
    assert figures == {"edits_failed: file_unknown": "3", "files_lost": "2"}


def test_repositories_passes_through_as_source_repositories_and_the_config_validates(tmp_path: Path) -> None:
    from traj2env_assets.config import RunConfigFile

    option = _load().repositories_option
    assert option(None) is None and option("auto") == "auto"
    checkouts = option(f"{tmp_path / 'a'}, {tmp_path / 'b'}")
    assert checkouts == [{"path": str(tmp_path / "a")}, {"path": str(tmp_path / "b")}]
    source = RunConfigFile.model_validate({"source": {"repositories": checkouts}}).source
    assert isinstance(source.repositories, list) and [e.path for e in source.repositories] == [
        tmp_path / "a",
        tmp_path / "b",
    ]

"""The yield funnel a person looks at: per family, how many inputs and candidates got
through each stage, and the reasons the others stopped, as pandas tables.

Written next to ``report.json``: ``funnel.csv`` (one row per stage, one column per
family), ``funnel.md`` (that table and the skip reasons as Markdown) and ``funnel.png``
(a bar chart per family). Everything here is computed from a :class:`RunReport`, so the
files always agree with ``report.json``.
"""

from __future__ import annotations

from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from traj2env_assets.atomic_files import atomic_write_bytes, atomic_write_text
from traj2env_assets.families.registry import registered_families
from traj2env_assets.lifecycle.status import STAGES, Stage
from traj2env_assets.stages.report.report import (
    REPORT_FILE,
    CandidateRecord,
    InputRecord,
    RunReport,
    with_dataset_quality,
    write_run_report,
)

if TYPE_CHECKING:
    import pandas as pd

FUNNEL_CSV = "funnel.csv"
FUNNEL_MARKDOWN = "funnel.md"
FUNNEL_PNG = "funnel.png"

FUNNEL_STAGES = (
    "inputs",
    "converted",
    "passed_gate",
    "candidates",
    "distinct",
    "built",
    "calibrated",
    "tried",
    "published",
    "accepted",
    "solved_in_rollouts",
)
"""``distinct``: candidates that are not a copy of another's work (``duplicate_of``);
``accepted``: published tasks a reviewer accepted (``traj2env review``);
``solved_in_rollouts``: published tasks an agent solved in a blind rollout (``traj2env rollout``)."""
# The stage a candidate must have passed to count in each candidate row.
_PASSED: dict[str, Stage] = {"built": "images", "calibrated": "calibration", "published": "publish"}
_GATE_PASSED = ("clean", "disabled", "scanner_absent")
SKIP_COLUMNS = ["family", "stage", "reason", "count"]


class FunnelFiles(BaseModel):
    csv: Path
    markdown: Path
    png: Path


def _passed(candidate: CandidateRecord, stage: Stage) -> bool:
    return candidate.reached is not None and STAGES.index(candidate.reached) >= STAGES.index(stage)


def _tried(candidate: CandidateRecord) -> bool:
    """The trial matrix ran: the candidate passed it, or it is what dropped the candidate."""
    return _passed(candidate, "trials") or candidate.dropped_at == "trials"


def _families(report: RunReport) -> list[str]:
    names = [family for item in report.inputs for family in item.mining_skipped]
    names += [candidate.family for candidate in report.candidates]
    return list(dict.fromkeys(names)) or registered_families().names()


def _family_column(report: RunReport, family: str, inputs: int, converted: int, gate: int) -> list[int]:
    own = [c for c in report.candidates if c.family == family]
    return [
        inputs,
        converted,
        gate,
        len(own),
        sum(1 for c in own if c.duplicate_of is None),
        *(sum(1 for c in own if _passed(c, _PASSED[stage])) for stage in ("built", "calibrated")),
        sum(1 for c in own if _tried(c)),
        sum(1 for c in own if _passed(c, "publish")),
        sum(1 for c in own if c.review == "accept"),
        sum(1 for c in own if c.rollout_solve_rate),
    ]


def funnel_frame(report: RunReport) -> pd.DataFrame:
    """Rows are the stages in order, columns the families; an input counts in every family."""
    import pandas as pd  # pandas and matplotlib are a second of every CLI start: loaded when used.

    inputs = len(report.inputs) + len(report.rejected_inputs)
    # The gate marks a blocked input skipped; it was converted all the same.
    converted = sum(1 for item in report.inputs if item.status == "converted" or item.scan_outcome)
    gate = sum(1 for item in report.inputs if item.scan_outcome in _GATE_PASSED)
    columns = {family: _family_column(report, family, inputs, converted, gate) for family in _families(report)}
    return pd.DataFrame(columns, index=pd.Index(FUNNEL_STAGES, name="stage"), dtype="int64")


def _input_stage(item: InputRecord) -> str:
    return "gate" if item.reason in ("gate", "scan_error") else "conversion"


def skip_reasons_frame(report: RunReport) -> pd.DataFrame:
    """One row per (family, stage, reason) with how many inputs or candidates stopped there,
    most frequent first; input-level reasons have no family ("")."""
    import pandas as pd

    rows: list[tuple[str, str, str]] = [("", "input", rejected.reason) for rejected in report.rejected_inputs]
    rows += [("", _input_stage(item), item.reason) for item in report.inputs if item.reason]
    rows += [
        (family, "candidates", reason)
        for item in report.inputs
        if not item.reason
        for family, reason in item.mining_skipped.items()
    ]
    rows += [(c.family, c.dropped_at or "candidates", c.reason) for c in report.candidates if c.reason]
    if not rows:
        return pd.DataFrame(columns=SKIP_COLUMNS).astype({"count": "int64"})
    frame = pd.DataFrame(rows, columns=SKIP_COLUMNS[:3])
    counted = frame.value_counts().rename("count").reset_index()
    return counted.sort_values(
        ["count", "family", "stage", "reason"], ascending=[False, True, True, True], kind="stable"
    ).reset_index(drop=True)


def funnel_markdown(funnel: pd.DataFrame, skips: pd.DataFrame) -> str:
    parts = ["## Funnel", "", funnel.reset_index().to_markdown(index=False), "", "## Skip reasons", ""]
    parts.append(skips.to_markdown(index=False) if len(skips) else "none")
    return "\n".join(parts) + "\n"


def _plot(funnel: pd.DataFrame, path: Path) -> None:
    import matplotlib

    # No display on servers and in containers: render to files only.
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(8, 4.5))
    try:
        if funnel.columns.empty:
            axis.text(0.5, 0.5, "no family ran", ha="center", va="center")
        else:
            funnel.iloc[::-1].plot.barh(ax=axis)
        axis.set_xlabel("count")
        axis.set_title("traj2env funnel")
        figure.tight_layout()
        # Through a buffer so the PNG lands atomically like every other output.
        buffer = BytesIO()
        figure.savefig(buffer, format="png", dpi=100)
        atomic_write_bytes(path, buffer.getvalue())
    finally:
        plt.close(figure)


def write_funnel_files(report: RunReport, destination: Path) -> FunnelFiles:
    funnel, skips = funnel_frame(report), skip_reasons_frame(report)
    files = FunnelFiles(
        csv=destination / FUNNEL_CSV, markdown=destination / FUNNEL_MARKDOWN, png=destination / FUNNEL_PNG
    )
    atomic_write_text(files.csv, funnel.to_csv())
    atomic_write_text(files.markdown, funnel_markdown(funnel, skips))
    _plot(funnel, files.png)
    return files


# What the CLI's progress line counts, summed over the families.
PROGRESS_STAGES = ("converted", "candidates", "built", "tried", "published")


def progress_counts(report: RunReport) -> dict[str, int]:
    funnel = funnel_frame(report)
    # Input stages repeat in every family's column; candidate stages add up across families.
    return {
        stage: int(funnel.loc[stage].max() if stage == "converted" else funnel.loc[stage].sum())
        for stage in PROGRESS_STAGES
    }


def refresh_dataset_quality(destination: Path) -> RunReport | None:
    """Rewrite ``report.json`` and the funnel files in ``destination`` with the reviews and
    rollouts recorded since (``traj2env review`` and ``rollout`` call it); None when no run
    wrote a report there."""
    path = destination / REPORT_FILE
    if not path.is_file():
        return None
    report = with_dataset_quality(RunReport.model_validate_json(path.read_text(encoding="utf-8")), destination)
    write_run_report(report, destination)
    write_funnel_files(report, destination)
    return report

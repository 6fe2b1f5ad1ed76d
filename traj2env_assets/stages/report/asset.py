"""The run-level report: one unpartitioned asset over every trajectory partition, and its checks."""

from typing import TYPE_CHECKING

import dagster as dg

from traj2env_assets.defs.llm import SPEND_SCOPE_TAG, llm_usage_metadata
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.families.registry import Families
from traj2env_assets.stages.report.funnel import funnel_frame, funnel_markdown, skip_reasons_frame, write_funnel_files
from traj2env_assets.stages.report.orphaned_staging import orphaned_staging_dirs
from traj2env_assets.stages.report.report import (
    build_run_report,
    report_disagreements,
    with_dataset_quality,
    write_run_report,
)

if TYPE_CHECKING:
    import pandas as pd


@dg.asset(
    name="report",
    group_name="report",
    kinds={"json"},
    deps=["publish"],
    description=(
        "report.json in the output destination: every input and candidate, and why it was kept or dropped; "
        "the funnel per family beside it (funnel.csv, funnel.md, funnel.png)."
    ),
)
def report_asset(
    context: dg.AssetExecutionContext, pipeline: PipelineResource, families: dg.ResourceParam[Families]
) -> dg.MaterializeResult:
    destination = pipeline.settings().output.destination
    scope = context.run.tags.get(SPEND_SCOPE_TAG)
    report = with_dataset_quality(
        build_run_report(pipeline.workspace(), families.names(), llm_scope=scope), destination
    )
    path = write_run_report(report, destination)
    files = write_funnel_files(report, destination)
    funnel, skips = funnel_frame(report), skip_reasons_frame(report)
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "inputs": report.totals.get("inputs", 0),
            "converted": report.totals.get("converted", 0),
            "skipped": report.totals.get("skipped", 0),
            "candidates": report.totals.get("candidates", 0),
            "kept": report.totals.get("kept", 0),
            "funnel": _table(funnel.reset_index()),
            "skip_reasons": _table(skips),
            "funnel_markdown": dg.MetadataValue.md(funnel_markdown(funnel, skips)),
            "funnel_csv": dg.MetadataValue.path(str(files.csv)),
            "funnel_png": dg.MetadataValue.path(str(files.png)),
            "by_reason": dg.MetadataValue.json(report.totals_by_reason),
            "scan_outcomes": dg.MetadataValue.json(report.scan_outcomes),
            **llm_usage_metadata(report.llm_usage),
        }
    )


def assets(families: Families) -> list[dg.AssetsDefinition]:
    return [report_asset]


def _table(frame: "pd.DataFrame") -> dg.TableMetadataValue:
    columns = [
        dg.TableColumn(str(name), "int" if frame[name].dtype.kind in "iu" else "string") for name in frame.columns
    ]
    records = [dg.TableRecord({str(k): v for k, v in row.items()}) for row in frame.to_dict(orient="records")]
    return dg.MetadataValue.table(records, dg.TableSchema(columns=columns))


@dg.asset_check(asset=report_asset, description="report.json agrees with the candidates' status files.")
def report_matches_stage_files(pipeline: PipelineResource, families: dg.ResourceParam[Families]) -> dg.AssetCheckResult:
    differences = report_disagreements(pipeline.workspace(), families.names(), pipeline.settings().output.destination)
    return dg.AssetCheckResult(
        passed=not differences,
        metadata={"differences": dg.MetadataValue.md("\n".join(f"- {d}" for d in differences) or "none")},
    )


@dg.asset_check(asset=report_asset, description="Every staging directory belongs to a current candidate.")
def no_orphaned_staging(pipeline: PipelineResource) -> dg.AssetCheckResult:
    orphans = orphaned_staging_dirs(pipeline.workspace())
    return dg.AssetCheckResult(
        passed=not orphans,
        metadata={"orphans": dg.MetadataValue.md("\n".join(f"- `{p}`" for p in orphans) or "none")},
    )

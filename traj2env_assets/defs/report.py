"""The run-level report: one unpartitioned asset over every trajectory partition, and its checks."""


import dagster as dg

from traj2env_assets.defs.llm import SPEND_SCOPE_TAG, llm_usage_metadata
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.lifecycle.checks import orphaned_staging_dirs
from traj2env_assets.report import build_run_report, report_disagreements, write_run_report


@dg.asset(
    group_name="report",
    kinds={"json"},
    deps=["published_tasks"],
    description="report.json in the output destination: every input and candidate, and why it was kept or dropped.",
)
def run_report(context: dg.AssetExecutionContext, pipeline: PipelineResource) -> dg.MaterializeResult:
    report = build_run_report(pipeline.workspace(), llm_scope=context.run.tags.get(SPEND_SCOPE_TAG))
    path = write_run_report(report, pipeline.settings().output.destination)
    funnel = dg.MetadataValue.table(
        [dg.TableRecord({"stage": stage, "count": count}) for stage, count in report.funnel.items()],
        dg.TableSchema(columns=[dg.TableColumn("stage", "string"), dg.TableColumn("count", "int")]),
    )
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "inputs": report.totals.get("inputs", 0),
            "converted": report.totals.get("converted", 0),
            "skipped": report.totals.get("skipped", 0),
            "candidates": report.totals.get("candidates", 0),
            "kept": report.totals.get("kept", 0),
            "funnel": funnel,
            "by_reason": dg.MetadataValue.json(report.totals_by_reason),
            "scan_outcomes": dg.MetadataValue.json(report.scan_outcomes),
            **llm_usage_metadata(report.llm_usage),
        }
    )


@dg.asset_check(asset=run_report, description="report.json agrees with the candidates' status files.")
def report_matches_stage_files(pipeline: PipelineResource) -> dg.AssetCheckResult:
    differences = report_disagreements(pipeline.workspace(), pipeline.settings().output.destination)
    return dg.AssetCheckResult(
        passed=not differences,
        metadata={"differences": dg.MetadataValue.md("\n".join(f"- {d}" for d in differences) or "none")},
    )


@dg.asset_check(asset=run_report, description="Every staging directory belongs to a current candidate.")
def no_orphaned_staging(pipeline: PipelineResource) -> dg.AssetCheckResult:
    orphans = orphaned_staging_dirs(pipeline.workspace())
    return dg.AssetCheckResult(
        passed=not orphans,
        metadata={"orphans": dg.MetadataValue.md("\n".join(f"- `{p}`" for p in orphans) or "none")},
    )

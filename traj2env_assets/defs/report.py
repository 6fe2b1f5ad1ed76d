"""The run-level report: one unpartitioned asset over every trajectory partition."""


from pathlib import Path

import dagster as dg

from traj2env_assets.defs.repair import published_repair_tasks
from traj2env_assets.defs.llm import SPEND_SCOPE_TAG
from traj2env_assets.defs.resources import PipelineResource, WorkspaceResource
from traj2env_assets.report import build_run_report, write_run_report


@dg.asset(
    group_name="report",
    kinds={"json"},
    deps=[published_repair_tasks],
    description="report.json in the output destination: every input and why it was kept or dropped.",
)
def run_report(
    context: dg.AssetExecutionContext, workspace: WorkspaceResource, pipeline: PipelineResource
) -> dg.MaterializeResult:
    report = build_run_report(workspace.workspace(), llm_scope=context.run.tags.get(SPEND_SCOPE_TAG))
    path = write_run_report(report, Path(pipeline.run_config().output.destination).resolve())
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "inputs": report.totals.get("inputs", 0),
            "converted": report.totals.get("converted", 0),
            "skipped": report.totals.get("skipped", 0),
            "by_reason": dg.MetadataValue.json(report.totals_by_reason),
            "scan_outcomes": dg.MetadataValue.json(report.scan_outcomes),
        }
    )

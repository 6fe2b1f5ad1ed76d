"""Stages 1 and 2: conversion to ATIF and the atif-scan gate."""

from collections.abc import Iterator

import dagster as dg

from traj2env_assets.defs.materialize import NOTHING, Metadata, PartitionFigures, data_version_of, partition_outputs
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.formats.stage import CONVERTER_VERSION, convert_partition, read_conversion
from traj2env_assets.scan_gate import scan_partition
from traj2env_assets.sources import load_registry, register_sources

# Cheap stages run a whole batch of partitions in one run (dagster.md §1.7); metadata
# and data versions are recorded per partition so a range run still shows each
# trajectory's own figures.
CHEAP_STAGE_POLICY = dg.BackfillPolicy.single_run()


@dg.asset(
    partitions_def=trajectories,
    group_name="ingest",
    kinds={"python"},
    backfill_policy=CHEAP_STAGE_POLICY,
    code_version=CONVERTER_VERSION,
    dagster_type=NOTHING,
    description="The source log converted to a validated ATIF-v1.7 trajectory (or a skip reason).",
)
def trajectory_atif(
    context: dg.AssetExecutionContext, pipeline: PipelineResource
) -> Iterator[dg.Output | dg.AssetMaterialization]:
    workspace = pipeline.workspace()
    settings = pipeline.settings()
    forced = settings.source.format
    registered = load_registry(workspace).sources
    if any(key not in registered for key in context.partition_keys):
        # A partition added in the UI or through GraphQL for a file no sensor tick or CLI
        # run has registered yet: register the source folder, as they would.
        register_sources(workspace, settings.source.path, forced, settings.options.limit)
    figures = {}
    for key in context.partition_keys:
        record = convert_partition(workspace, key, forced)
        metadata: Metadata = {
            "path": dg.MetadataValue.path(str(workspace.trajectory_file(key))),
            "format": record.format or "unknown",
            "status": record.status,
            "reason": record.reason or "",
            "detail": record.detail or "",
            "steps": record.steps,
            "tool_calls": record.tool_calls,
            "skipped_lines": record.skipped_lines,
            "duplicate_tool_calls": record.duplicate_tool_calls,
            "content_sha256": record.content_sha256[:16],
            "cached": record.cached,
        }
        version = data_version_of([record.content_sha256, record.converter_version, forced])
        figures[key] = PartitionFigures(metadata=metadata, data_version=version)
    yield from partition_outputs(context.asset_key, figures)


@dg.asset(
    partitions_def=trajectories,
    group_name="ingest",
    kinds={"python"},
    deps=[trajectory_atif],
    backfill_policy=CHEAP_STAGE_POLICY,
    dagster_type=NOTHING,
    description="The atif-scan gate verdict: clean, blocked, disabled, scanner_absent, scan_error.",
)
def scan_verdict(
    context: dg.AssetExecutionContext, pipeline: PipelineResource
) -> Iterator[dg.Output | dg.AssetMaterialization]:
    workspace = pipeline.workspace()
    options = pipeline.options()
    figures = {}
    for key in context.partition_keys:
        verdict = scan_partition(
            workspace, key, enabled=options.scan, block=options.scan_block, allow=options.scan_allow
        )
        metadata: Metadata = {
            "outcome": verdict.outcome,
            "blocking_findings": ", ".join(verdict.blocking_ids) or "none",
            "findings": dg.MetadataValue.md(
                "\n".join(
                    f"- `{f.id}` ({f.severity})"
                    + "".join(
                        f"\n  - step {e.step_id} ({e.tool or e.channel}): `{e.excerpt[:200]}`" for e in f.evidence
                    )
                    for f in verdict.findings
                )
                or "none"
            ),
        }
        conversion = read_conversion(workspace, key)
        scanned = conversion.content_sha256 if conversion else None
        version = data_version_of([scanned, verdict.model_dump(mode="json")])
        figures[key] = PartitionFigures(metadata=metadata, data_version=version)
    yield from partition_outputs(context.asset_key, figures)

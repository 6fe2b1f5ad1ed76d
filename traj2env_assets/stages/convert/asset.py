"""Stage 1, ``convert``: the source log converted to a validated ATIF trajectory."""

from collections.abc import Iterator

import dagster as dg

from traj2env_assets.defs.materialize import NOTHING, Metadata, PartitionFigures, data_version_of, partition_outputs
from traj2env_assets.defs.partitions import CHEAP_STAGE_POLICY, trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.families.registry import Families
from traj2env_assets.sources import load_registry, register_sources
from traj2env_assets.stages.convert.conversion import CONVERTER_VERSION, convert_partition


@dg.asset(
    partitions_def=trajectories,
    group_name="ingest",
    kinds={"python"},
    backfill_policy=CHEAP_STAGE_POLICY,
    code_version=CONVERTER_VERSION,
    dagster_type=NOTHING,
    description="The source log converted to a validated ATIF-v1.7 trajectory (or a skip reason).",
)
def convert(
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


def assets(families: Families) -> list[dg.AssetsDefinition]:
    return [convert]

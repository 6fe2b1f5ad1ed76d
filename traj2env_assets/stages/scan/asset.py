"""Stage 2, ``scan``: the atif-scan gate's verdict on the converted trajectory."""

from collections.abc import Iterator

import dagster as dg

from traj2env_assets.defs.materialize import NOTHING, Metadata, PartitionFigures, data_version_of, partition_outputs
from traj2env_assets.defs.partitions import CHEAP_STAGE_POLICY, trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.families.registry import Families
from traj2env_assets.stages.convert.conversion import read_conversion
from traj2env_assets.stages.scan.gate import scan_partition


@dg.asset(
    partitions_def=trajectories,
    group_name="ingest",
    kinds={"python"},
    deps=["convert"],
    backfill_policy=CHEAP_STAGE_POLICY,
    dagster_type=NOTHING,
    description="The atif-scan gate verdict: clean, blocked, disabled, scanner_absent, scan_error.",
)
def scan(
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


def assets(families: Families) -> list[dg.AssetsDefinition]:
    return [scan]

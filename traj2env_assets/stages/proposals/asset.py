"""Stage 5: ``proposals``, one cached, budgeted model call per candidate whose family asks for one."""

from collections.abc import Iterator

import dagster as dg

from traj2env_assets.defs.candidate_stages import PER_TRAJECTORY, partition_statuses_of, stage_partition_figures
from traj2env_assets.defs.llm import LlmResource, llm_usage_metadata
from traj2env_assets.defs.materialize import NOTHING, Metadata, partition_outputs
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.pools import LLM_POOL
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.families.registry import Families
from traj2env_assets.lifecycle.status import CandidateStatus
from traj2env_assets.llm.usage import LlmUsage
from traj2env_assets.stages.candidates.asset import candidates_asset_key
from traj2env_assets.stages.proposals.proposals import propose

PROPOSALS_ASSET = "proposals"


def _usage(statuses: list[CandidateStatus]) -> Metadata:
    return dict(llm_usage_metadata(LlmUsage.total(s.proposal.usage for s in statuses if s.proposal)))


def proposals_asset(families: Families) -> dg.AssetsDefinition:
    @dg.asset(
        name=PROPOSALS_ASSET,
        partitions_def=trajectories,
        deps=[candidates_asset_key(family) for family in families],
        group_name="proposals",
        kinds={"python"},
        pool=LLM_POOL,
        backfill_policy=PER_TRAJECTORY,
        dagster_type=NOTHING,
        description="One model call per candidate of a family that asks for one (cached, budgeted); "
        "reasons llm_not_configured, llm_declined, budget_exhausted, llm_error.",
    )
    def proposals(
        context: dg.AssetExecutionContext, pipeline: PipelineResource, llm: LlmResource
    ) -> Iterator[dg.Output | dg.AssetMaterialization]:
        workspace = pipeline.workspace()
        keys = list(context.partition_keys)
        propose(
            workspace,
            families,
            pipeline.options(),
            [status for key in keys for status in partition_statuses_of(pipeline, families, key)],
            lambda: llm.client_for(context),
        )
        figures, common = stage_partition_figures(pipeline, families, keys, "proposals", _usage)
        yield from partition_outputs(context.asset_key, figures, common)

    return proposals


def assets(families: Families) -> list[dg.AssetsDefinition]:
    return [proposals_asset(families)]

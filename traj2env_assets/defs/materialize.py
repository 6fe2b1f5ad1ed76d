"""Per-partition materializations with each partition's own metadata and data version.

In a single-partition run the asset's output carries both. A range run (the CLI and
single-run backfills process many trajectories per run) gets one output for the whole
range, and Dagster copies its data version to every partition (dagster-io/dagster#18649,
#34013); so after the output, each partition whose figures differ from the range's
gets its own ``AssetMaterialization``, the latest event of that partition, carrying its
data version and metadata. ``common`` is what most partitions have (e.g. no candidate
at all): those partitions need no second event, which keeps the event log small.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

import dagster as dg

from traj2env_assets.conventions import sorted_json_sha256

# Materialization metadata as Dagster takes it; values are ``dg.RawMetadataValue``, a
# name Dagster only exports for type checkers.
Metadata = dict[str, Any]
# The assets' output type: they return no value (their results are files, their figures
# metadata). Dagster exports ``Nothing`` typed ``type[None]`` while ``@asset`` declares
# ``dagster_type: DagsterType``; it resolves the builtin to its DagsterType itself.
NOTHING = cast(dg.DagsterType, dg.Nothing)
# Dagster's own tag names (dagster._core.definitions.data_version); not exported publicly.
DATA_VERSION_TAG = "dagster/data_version"
DATA_VERSION_IS_USER_PROVIDED_TAG = "dagster/data_version_is_user_provided"


@dataclass(frozen=True)
class PartitionFigures:
    metadata: Metadata
    data_version: str


def data_version_of(value: object) -> str:
    return sorted_json_sha256(value, default=str)[:24]


def partition_outputs(
    asset_key: dg.AssetKey, figures: Mapping[str, PartitionFigures], common: PartitionFigures | None = None
) -> Iterator[dg.Output | dg.AssetMaterialization]:
    if len(figures) == 1:
        [only] = figures.values()
        yield dg.Output(None, metadata=only.metadata, data_version=dg.DataVersion(only.data_version))
        return
    shared = common or PartitionFigures(metadata={}, data_version=data_version_of(sorted(figures)))
    yield dg.Output(None, metadata=shared.metadata, data_version=dg.DataVersion(shared.data_version))
    for key, own in figures.items():
        if common is not None and own.data_version == common.data_version:
            continue
        yield dg.AssetMaterialization(
            asset_key=asset_key,
            partition=key,
            metadata=own.metadata,
            tags={DATA_VERSION_TAG: own.data_version, DATA_VERSION_IS_USER_PROVIDED_TAG: "true"},
        )

"""The Harbor dataset over every published task: ``dataset.json`` and ``splits.json``."""

import dagster as dg

from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.harbor.dataset import MANIFEST_FILE, write_dataset


@dg.asset(
    group_name="publish",
    kinds={"harbor", "json"},
    deps=["publish"],
    description="dataset.json (task ids, families, source traces, content hashes, splits) and "
    "splits.json (persisted source → train/test) next to the published tasks.",
)
def harbor_dataset(pipeline: PipelineResource) -> dg.MaterializeResult:
    output = pipeline.settings().output
    destination = output.destination
    manifest = write_dataset(destination, name=output.dataset_name, org=output.org)
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(destination / MANIFEST_FILE)),
            "tasks": len(manifest.tasks),
            "train": len(manifest.split_of("train")),
            "test": len(manifest.split_of("test")),
            "sources": len({task.source_trace for task in manifest.tasks}),
            "skipped": len(manifest.skipped),
        }
    )

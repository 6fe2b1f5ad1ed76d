"""The real Dagster graph run on sample sessions with the toy family beside the registered
ones (what its registry line would give), or with any family of ``families`` (``family=``).

The model is the local fake provider (an OpenAI-compatible HTTP server); everything
else is real: the Dagster instance, the Docker engine, Harbor task files.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import dagster as dg

from traj2env_assets.config import RunConfigFile, RunSettings
from traj2env_assets.definitions import build_definitions
from traj2env_assets.defs.docker import DockerEngineResource
from traj2env_assets.defs.jobs import PIPELINE_JOB, REPORT_JOB
from traj2env_assets.defs.llm import SPEND_SCOPE_TAG, LlmResource
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.families.contract import Family
from traj2env_assets.families.registry import Families, registered_families
from traj2env_assets.layout import Workspace
from traj2env_assets.sources import register_sources
from traj2env_assets.stages.report.report import REPORT_FILE
from traj2env_assets_tests.families.conftest import EXAMPLES
from traj2env_assets_tests.families.toy import ToyFamily
from traj2env_assets_tests.llm.fake_provider import FakeProvider
from traj2env_assets_tests.llm.helpers import PRICED_MODEL


def registered_and(*extra: Family) -> Families:
    """The registered families and a test's own: the collection their registry lines would give."""
    return Families((*registered_families(), *extra))


class ToyPipeline:
    def __init__(
        self,
        root: Path,
        samples: list[str],
        provider: FakeProvider,
        instance: dg.DagsterInstance,
        container_labels: dict[str, str] | None = None,
        family: str = "toy",
        families: Families | None = None,
    ) -> None:
        self.root = root
        self.family = family
        self.families = registered_and(ToyFamily()) if families is None else families
        self.provider = provider
        self.instance = instance
        self.container_labels = container_labels or {}
        source = root / "sessions"
        source.mkdir(parents=True)
        for sample in samples:
            shutil.copy(EXAMPLES / sample, source / Path(sample).name)
        self.source = source
        self.workspace = Workspace(root=(root / "workspace").resolve())
        self.keys = register_sources(self.workspace, source).new
        assert trajectories.name is not None
        instance.add_dynamic_partitions(trajectories.name, self.keys)

    def pipeline(self, **options: Any) -> PipelineResource:
        config = RunConfigFile.model_validate(
            {
                "source": {"path": str(self.source)},
                "pipeline": {"options": {"families": [self.family], "llm": PRICED_MODEL, "jobs": 2, **options}},
            }
        )
        return PipelineResource.from_settings(RunSettings.resolve(config, self.workspace.root))

    def definitions(self, **options: Any) -> dg.Definitions:
        pipeline = self.pipeline(**options)
        docker = DockerEngineResource(
            pipeline=pipeline, container_labels=self.container_labels, agent_timeout_s=120, verifier_timeout_s=180
        )
        llm = LlmResource(pipeline=pipeline, api_base=self.provider.api_base, num_retries=0, timeout_s=30)
        return build_definitions(pipeline, docker_engine=docker, llm=llm, families=self.families)

    def run(self, **options: Any) -> tuple[dg.ExecuteInProcessResult, dg.ExecuteInProcessResult]:
        """The whole per-trajectory graph over every key in one run, then the report job (with its checks)."""
        definitions = self.definitions(**options)
        # Like the generate command: the runs of one call share a spend ledger the report reads.
        tags = {SPEND_SCOPE_TAG: f"toy-{uuid.uuid4().hex[:8]}"}
        if len(self.keys) == 1:
            partition: dict[str, Any] = {"partition_key": self.keys[0], "tags": tags}
        else:
            partition = {
                "tags": {
                    **tags,
                    "dagster/asset_partition_range_start": self.keys[0],
                    "dagster/asset_partition_range_end": self.keys[-1],
                }
            }
        result = definitions.resolve_job_def(PIPELINE_JOB).execute_in_process(instance=self.instance, **partition)
        return result, definitions.resolve_job_def(REPORT_JOB).execute_in_process(instance=self.instance, tags=tags)

    def report(self) -> dict[str, Any]:
        return json.loads((self.workspace.root / "trajectory-tasks" / REPORT_FILE).read_text())

    def candidates(self) -> list[dict[str, Any]]:
        return [c for c in self.report()["candidates"] if c["family"] == self.family]

    def latest_metadata(self, asset: str, key: str | None) -> dict[str, Any]:
        """The latest materialization's metadata of ``asset`` (of its partition ``key`` if it has partitions)."""
        partitions = [key] if key is not None else None
        records = self.instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey.from_user_string(asset), asset_partitions=partitions), limit=1
        ).records
        materialization = records[0].asset_materialization
        assert materialization is not None
        return {name: value.value for name, value in materialization.metadata.items()}

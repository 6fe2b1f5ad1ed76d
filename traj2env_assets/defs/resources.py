"""Resources shared by every stage's assets."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from traj2env_assets.config import PipelineOptions, RunConfigFile, load_run_config
from traj2env_assets.workspace import Workspace


class WorkspaceResource(dg.ConfigurableResource):
    """The workspace root that every stage writes ``<stage>/<partition key>/...`` under."""

    root: str = "workspace"

    def workspace(self) -> Workspace:
        return Workspace(root=Path(self.root).resolve())


class PipelineResource(dg.ConfigurableResource):
    """The run configuration: the seed-shaped YAML file plus ``--pipeline-opt`` overrides.

    ``options_json`` holds the overrides as JSON so one resource value carries the
    whole configuration into sensors, the UI and CLI-driven runs alike.
    """

    config_path: str | None = None
    options_json: str = "{}"

    def run_config(self) -> RunConfigFile:
        if self.config_path and Path(self.config_path).is_file():
            config = load_run_config(Path(self.config_path))
        else:
            config = RunConfigFile()
        overrides = json.loads(self.options_json or "{}")
        if overrides:
            merged = {**config.pipeline.options.model_dump(), **overrides}
            config.pipeline.options = PipelineOptions.model_validate(merged)
        return config

    def options(self) -> PipelineOptions:
        return self.run_config().pipeline.options

"""The ``pipeline`` resource: the run's validated settings, shared by every stage's assets.

Beside it, the ``families`` resource (``FAMILIES_RESOURCE``) is the :class:`Families` in play,
a plain object the definitions build once: every registered family, or those a test hands over.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import dagster as dg
from pydantic import field_validator

from traj2env_assets.config import PipelineOptions, RunConfigFile, RunSettings, load_run_config
from traj2env_assets.layout import Workspace

FAMILIES_RESOURCE = "families"


@lru_cache(maxsize=16)
def _parse(settings_json: str) -> RunSettings:
    return RunSettings.model_validate_json(settings_json)


class PipelineResource(dg.ConfigurableResource):
    """The run configuration (seed-shaped YAML plus ``--pipeline-opt`` overrides) with every
    path resolved, as JSON: validated when the resource is made, parsed once per process.

    One value carries the whole configuration into sensors, the UI and CLI runs alike.
    """

    settings_json: str

    @field_validator("settings_json")
    @classmethod
    def _valid(cls, value: str) -> str:
        _parse(value)
        return value

    @classmethod
    def from_settings(cls, settings: RunSettings) -> PipelineResource:
        return cls(settings_json=settings.model_dump_json())

    @classmethod
    def from_files(cls, config_path: Path, workspace_root: Path) -> PipelineResource:
        """The UI's and sensor's configuration; a missing file means the defaults."""
        config = load_run_config(config_path) if config_path.is_file() else RunConfigFile()
        return cls.from_settings(RunSettings.resolve(config, workspace_root))

    def settings(self) -> RunSettings:
        return _parse(self.settings_json)

    def options(self) -> PipelineOptions:
        return self.settings().options

    def workspace(self) -> Workspace:
        return Workspace(root=self.settings().workspace)

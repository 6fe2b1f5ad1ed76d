"""The run configuration: the seed's YAML shape, its pipeline options, and the resolved settings.

:func:`load_run_config` reads and validates the YAML once; :meth:`RunSettings.resolve`
makes every path absolute once, and the Dagster ``pipeline`` resource carries the
result to every asset. A relative path written in the config (``source.path``,
``output.destination``, ``llm_cache_dir``, ``source.repositories``) resolves against the current directory, as
the product notes' quickstart expects (``destination: workspace/trajectory-tasks`` is
``./workspace/trajectory-tasks``, never ``workspace/workspace/...``); an output the
config leaves out lives under the workspace root, so ``--workspace`` moves the defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

from traj2env_assets.atif_scanner import known_finding_ids
from traj2env_assets.docker_engine.connection import DEFAULT_PLATFORM
from traj2env_assets.layout import DEFAULT_SOURCE_DIR, Workspace
from traj2env_assets.repositories.models import Repositories

SourceFormat = Literal["auto", "atif", "claude-code", "codex", "pi"]
ReasoningEffort = Literal["low", "medium", "high"]


def _split_comma_string(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class PipelineOptions(BaseModel):
    """Options under ``pipeline.options`` (and ``--pipeline-opt key=value``), with the seed's names."""

    model_config = ConfigDict(extra="forbid")

    families: Annotated[list[str], BeforeValidator(_split_comma_string)] = Field(default_factory=lambda: ["repair"])
    limit: int | None = Field(default=None, ge=1)
    jobs: int = Field(default=4, ge=1)
    scan: bool = True
    scan_block: Annotated[list[str], BeforeValidator(_split_comma_string)] = Field(default_factory=list)
    scan_allow: Annotated[list[str], BeforeValidator(_split_comma_string)] = Field(default_factory=list)
    propose_only: bool = False
    platform: str = DEFAULT_PLATFORM
    max_llm_tokens: int = Field(default=32000, ge=1)
    reasoning_effort: ReasoningEffort | None = None
    llm_cache_dir: Path | None = None
    container_memory: str = "4g"
    max_llm_spend_usd: float = Field(default=5.0, ge=0)
    max_tasks_per_group: int = Field(default=3, ge=1)
    """Near-duplicate tasks published per group (``quality.near_duplicates``); more: ``group_cap``."""
    max_tasks_per_project: int = Field(default=25, ge=1)
    """Tasks published per project (as Repo2RLEnv's quality pilot caps them); more: ``project_cap``."""
    llm: str | None = None

    @field_validator("families")
    @classmethod
    def _families_named(cls, value: list[str]) -> list[str]:
        # Which names exist depends on the families in play, which the caller chooses:
        # load_run_config checks them against the registered ones, definitions against its own.
        if not value:
            raise ValueError("families must name at least one family")
        return list(dict.fromkeys(value))

    @field_validator("scan_block", "scan_allow")
    @classmethod
    def _known_finding_ids(cls, value: list[str]) -> list[str]:
        known = known_finding_ids()
        unknown = [item for item in value if known is not None and item not in known]
        if unknown:
            raise ValueError(f"unknown atif-scan finding id(s): {', '.join(unknown)}")
        return list(dict.fromkeys(value))

    @model_validator(mode="after")
    def _block_and_allow_disjoint(self) -> PipelineOptions:
        both = sorted(set(self.scan_block) & set(self.scan_allow))
        if both:
            raise ValueError(f"finding id(s) both in scan_block and scan_allow: {', '.join(both)}")
        return self

    @classmethod
    def option_names(cls) -> list[str]:
        return sorted(name for name in cls.model_fields if name != "llm")


class SourceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["trajectory"] = "trajectory"
    path: Path = DEFAULT_SOURCE_DIR
    format: SourceFormat = "auto"
    repositories: Repositories | None = None
    """Local git checkouts of the projects the sessions worked on (``auto``: the checkout
    at the recorded cwd, or the one holding the session file); None: replay alone."""

    @field_validator("path", mode="before")
    @classmethod
    def _local_path(cls, value: Any) -> Any:
        # Checked before Path() folds "hf://" into "hf:/": a remote source would otherwise
        # become a missing local folder and an empty run.
        if isinstance(value, str) and "://" in value:
            raise ValueError(
                f"source.path {value!r} is a URL; only local folders are read "
                "(download a Hugging Face dataset first, e.g. "
                "`huggingface-cli download --repo-type dataset NAME --local-dir DIR`)"
            )
        return value


class PipelineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Literal["trajectory_to_env"] = "trajectory_to_env"
    options: PipelineOptions = Field(default_factory=PipelineOptions)


class OutputConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    destination: Path | None = None
    org: str = "local"
    dataset_name: str = "trajectory-tasks"


class RunConfigFile(BaseModel):
    """The YAML file given to ``traj2env generate --config``."""

    model_config = ConfigDict(extra="forbid")

    source: SourceConfig = Field(default_factory=SourceConfig)
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)


class ResolvedOutput(OutputConfig):
    destination: Path


class RunSettings(BaseModel):
    """The validated configuration with every path absolute; see the module docstring."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workspace: Path
    source: SourceConfig
    options: PipelineOptions
    output: ResolvedOutput

    @classmethod
    def resolve(cls, config: RunConfigFile, workspace_root: Path, cwd: Path | None = None) -> RunSettings:
        workspace = Workspace(root=workspace_root.resolve())
        here = (cwd or Path.cwd()).resolve()
        options = config.pipeline.options
        cache_dir = here / options.llm_cache_dir if options.llm_cache_dir else workspace.default_llm_cache_dir
        destination = here / config.output.destination if config.output.destination else workspace.default_destination
        repositories = config.source.repositories
        if isinstance(repositories, list):
            repositories = [entry.model_copy(update={"path": here / entry.path}) for entry in repositories]
        return cls(
            workspace=workspace.root,
            source=config.source.model_copy(update={"path": here / config.source.path, "repositories": repositories}),
            options=options.model_copy(update={"llm_cache_dir": cache_dir}),
            output=ResolvedOutput(**{**config.output.model_dump(), "destination": destination}),
        )


class ConfigError(ValueError):
    """A config file or option that cannot be used, with a message meant for the user."""


def parse_pipeline_opts(pairs: list[str]) -> dict[str, Any]:
    """Turn ``key=value`` strings into a dict, rejecting unknown keys by name."""
    valid = PipelineOptions.option_names()
    parsed: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep:
            raise ConfigError(f"--pipeline-opt {pair!r} is not key=value")
        if key not in valid:
            raise ConfigError(f"unknown pipeline option {key!r}; valid options: {', '.join(valid)}")
        parsed[key] = yaml.safe_load(value) if value.strip() else None
    return parsed


def load_run_config(path: Path, overrides: list[str] | None = None, llm: str | None = None) -> RunConfigFile:
    """Read the YAML config, apply ``--pipeline-opt`` overrides and ``--llm``, and validate."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"config {path} must be a mapping")
    options = dict((raw.get("pipeline") or {}).get("options") or {})
    unknown = sorted(set(options) - set(PipelineOptions.option_names()))
    if unknown:
        raise ConfigError(
            f"unknown pipeline option(s) {', '.join(unknown)}; "
            f"valid options: {', '.join(PipelineOptions.option_names())}"
        )
    options.update(parse_pipeline_opts(overrides or []))
    if llm:
        options["llm"] = llm
    raw.setdefault("pipeline", {})
    raw["pipeline"] = {**(raw["pipeline"] or {}), "options": options}
    try:
        config = RunConfigFile.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"invalid config {path}:\n{exc}") from exc
    # Imported here: the registry pulls in every family, which config users rarely need.
    from traj2env_assets.families.registry import UnknownFamilyError, registered_families

    try:
        registered_families().selected(config.pipeline.options.families)
    except UnknownFamilyError as exc:
        raise ConfigError(f"invalid config {path}: {exc}") from exc
    return config

"""The run configuration: the seed's YAML shape and its pipeline options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

Family = Literal["repair", "build", "extend", "qa"]
SourceFormat = Literal["auto", "atif", "claude-code", "codex", "pi"]
ReasoningEffort = Literal["low", "medium", "high"]


def _split_comma_string(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class PipelineOptions(BaseModel):
    """Options under ``pipeline.options`` (and ``--pipeline-opt key=value``), with the seed's names."""

    model_config = ConfigDict(extra="forbid")

    families: Annotated[list[Family], BeforeValidator(_split_comma_string)] = Field(
        default_factory=lambda: ["repair"]
    )
    limit: int | None = Field(default=None, ge=1)
    jobs: int = Field(default=4, ge=1)
    scan: bool = True
    propose_only: bool = False
    platform: str = "linux/amd64"
    max_llm_tokens: int = Field(default=32000, ge=1)
    reasoning_effort: ReasoningEffort | None = None
    llm_cache_dir: Path = Path("workspace/cache/trajectory_to_env/llm")
    container_memory: str = "4g"
    max_llm_spend_usd: float = Field(default=5.0, ge=0)
    llm: str | None = None

    @field_validator("families")
    @classmethod
    def _families_unique(cls, value: list[Family]) -> list[Family]:
        if not value:
            raise ValueError("families must name at least one of repair, build, extend, qa")
        return list(dict.fromkeys(value))

    @classmethod
    def option_names(cls) -> list[str]:
        return sorted(name for name in cls.model_fields if name != "llm")


class SourceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["trajectory"] = "trajectory"
    path: Path = Path("workspace/trajectories")
    format: SourceFormat = "auto"


class PipelineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Literal["trajectory_to_env"] = "trajectory_to_env"
    options: PipelineOptions = Field(default_factory=PipelineOptions)


class OutputConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    destination: Path = Path("workspace/trajectory-tasks")
    org: str = "local"
    dataset_name: str = "trajectory-tasks"


class RunConfigFile(BaseModel):
    """The YAML file given to ``traj2env generate --config``."""

    model_config = ConfigDict(extra="forbid")

    source: SourceConfig = Field(default_factory=SourceConfig)
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)


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


def load_run_config(
    path: Path, overrides: list[str] | None = None, llm: str | None = None
) -> RunConfigFile:
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
        return RunConfigFile.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"invalid config {path}:\n{exc}") from exc

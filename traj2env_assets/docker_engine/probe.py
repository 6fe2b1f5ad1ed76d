"""A probe: one script run in a fresh container of an image, networking off, and what it
left (calibration, the behaviour gate's and the mutation runs' probes are all this)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Probe(BaseModel):
    """One script run in a fresh container of the candidate's image, networking off."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    script: str
    workdir: str = "/workspace"
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(default=300, gt=0)
    # Files written into the container before the script runs: {absolute path: bytes}.
    files: dict[str, bytes] = Field(default_factory=dict)
    # A file the script leaves for the host (read back as text before the container goes):
    # for results larger than the output tail.
    result_file: str | None = None


class ProbeResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    exit_code: int | None
    timed_out: bool
    output_tail: str
    seconds: float
    stopped_by: str | None = None
    """The container limit that ended the probe (``timeout``, ``output_limit``, ``disk_limit``,
    ``out_of_memory``), if one did."""
    result: str | None = None
    """The probe's ``result_file``, if it has one and left it."""

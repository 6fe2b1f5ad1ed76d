"""Readable metadata for the candidate stages: one table row per candidate, and the stage's counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

import dagster as dg

from traj2env_assets.defs.materialize import Metadata, PartitionFigures, data_version_of
from traj2env_assets.families.contract import Fact
from traj2env_assets.lifecycle.status import CandidateStatus, Stage

Cell = str | int | float | bool | None
Column = tuple[str, str, Callable[[CandidateStatus], Cell]]


def _facts(facts: Mapping[str, Fact]) -> str:
    def text(value: Fact) -> str:
        return ", ".join(value) if isinstance(value, list) else str(value)

    return "; ".join(f"{name}: {text(value)}" for name, value in facts.items() if value not in ("", []))


def _rewards(status: CandidateStatus) -> str:
    rewards = status.trials.rewards if status.trials else {}
    return " ".join(f"{name}={'none' if reward is None else f'{reward:g}'}" for name, reward in rewards.items())


_COMMON: list[Column] = [
    ("family", "string", lambda s: s.family),
    ("task", "string", lambda s: s.task_id),
    ("state", "string", lambda s: s.state),
    ("reason", "string", lambda s: s.drop.reason if s.drop else None),
]
_STAGE_COLUMNS: dict[Stage, list[Column]] = {
    "candidates": [("facts", "string", lambda s: _facts(s.facts))],
    "proposals": [
        ("prompt", "string", lambda s: f"{s.proposal.prompt} v{s.proposal.prompt_version}" if s.proposal else None),
        ("cache_hit", "bool", lambda s: s.proposal.cache_hit if s.proposal else None),
        ("model_calls", "int", lambda s: s.proposal.usage.calls if s.proposal else None),
        ("tokens_out", "int", lambda s: s.proposal.usage.tokens_out if s.proposal else None),
        ("spend_usd", "float", lambda s: round(s.proposal.usage.spend_usd, 6) if s.proposal else None),
        ("decline", "string", lambda s: s.proposal.decline_reason if s.proposal else None),
        ("raw_reply", "string", lambda s: s.proposal.raw_reply_path if s.proposal else None),
    ],
    "images": [
        ("image", "string", lambda s: s.image.tag if s.image else None),
        ("built", "bool", lambda s: s.image.built if s.image else None),
        ("seconds", "float", lambda s: s.image.seconds if s.image else None),
    ],
    "calibration": [
        ("probes_shared", "bool", lambda s: s.calibration.shared if s.calibration else None),
        ("facts", "string", lambda s: _facts(s.calibration.facts) if s.calibration else None),
    ],
    "trials": [
        ("rewards", "string", _rewards),
        ("matrix_shared", "bool", lambda s: s.trials.shared if s.trials else None),
        ("seconds", "float", lambda s: s.trials.seconds if s.trials else None),
    ],
    "publish": [("published_path", "string", lambda s: s.published_path)],
}


def candidate_table(statuses: list[CandidateStatus], stage: Stage) -> dg.MetadataValue:
    columns = [*_COMMON, *_STAGE_COLUMNS[stage]]
    schema = dg.TableSchema(columns=[dg.TableColumn(name, kind) for name, kind, _ in columns])
    records = [dg.TableRecord({name: cell(status) for name, _, cell in columns}) for status in statuses]
    return dg.MetadataValue.table(records, schema)


def stage_figures(
    statuses: list[CandidateStatus], stage: Stage, extra: Metadata | None = None, input_key: str | None = None
) -> PartitionFigures:
    """The metadata and data version of one partition of a candidate stage; ``input_key``
    (what the stage read) enters the version too, so two trajectories without candidates differ."""
    states = Counter(status.state for status in statuses)
    metadata: Metadata = {
        "candidates": len(statuses),
        "states": dg.MetadataValue.json(dict(sorted(states.items()))),
        "candidate_table": candidate_table(statuses, stage),
        **(extra or {}),
    }
    return PartitionFigures(
        metadata=metadata, data_version=data_version_of([input_key, [s.fingerprint(stage) for s in statuses]])
    )

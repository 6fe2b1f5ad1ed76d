"""Stage 5, LLM proposals: one cached, budgeted call per candidate of a family that asks for one.

A candidate whose family returns no :class:`ProposalRequest` passes straight through, and
so does one whose family makes recorded tasks when no model is configured.
Otherwise the proposal is reused when everything the call depends on is unchanged
(model, token budget, reasoning effort, prompt name and version, the rendered prompt,
the schema) and ``proposal.json`` holds a valid reply; this check needs no LiteLLM, so
a warm rerun imports nothing and calls nothing. Else the LLM client is asked (its own
cache makes an identical request free) and the outcome is recorded:

- ``llm_not_configured``: the family needs a model and none was given (``--llm``); a
  family whose proposal is optional goes on without one (its offline mode);
- the family's own reason when it refuses to ask about a candidate (``project_too_large``);
- ``llm_declined`` (refusal, empty, truncated, invalid, prompt_too_long; the raw reply is
  kept under ``<llm_cache_dir>/declined/`` and its path recorded), ``budget_exhausted``,
  ``llm_error``: the candidate stops here, and the next run asks again.

Calls run ``jobs`` at a time in threads: they wait on the network, not the CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.config import PipelineOptions
from traj2env_assets.conventions import sorted_json_sha256
from traj2env_assets.families.contract import CandidateRejected, Drop, Family, ProposalRequest
from traj2env_assets.families.registry import Families
from traj2env_assets.layout import Workspace
from traj2env_assets.lifecycle.duplicates import dropped_as_duplicate
from traj2env_assets.lifecycle.status import (
    CandidateRef,
    CandidateStatus,
    ProposalRecord,
    candidate_files,
    read_candidate,
    read_proposal,
    save_status,
)
from traj2env_assets.llm.prompts import Prompt, load_prompt
from traj2env_assets.llm.usage import LlmUsage

if TYPE_CHECKING:
    from traj2env_assets.llm.client import LlmClient

LLM_NOT_CONFIGURED = "llm_not_configured"


def _input_key(options: PipelineOptions, prompt: Prompt, rendered: str, schema: type[BaseModel]) -> str:
    asked = {
        "model": options.llm,
        "max_tokens": options.max_llm_tokens,
        "reasoning_effort": options.reasoning_effort,
        "prompt": prompt.name,
        "prompt_version": prompt.version,
        "rendered": rendered,
        "schema": schema.model_json_schema(),
    }
    return sorted_json_sha256(asked)


@dataclass(frozen=True)
class _Pending:
    status: CandidateStatus
    family: Family
    request: ProposalRequest
    prompt: Prompt
    record: ProposalRecord


def _prepare(
    workspace: Workspace, options: PipelineOptions, family: Family, status: CandidateStatus
) -> CandidateStatus | _Pending:
    """A status already decided without the model, or the call still to make."""
    if (duplicate := dropped_as_duplicate(workspace, status, "proposals")) is not None:
        return duplicate
    candidate = read_candidate(workspace, family, status)
    if not options.llm and family.proposal_optional:
        return save_status(workspace, status.passed("proposals", proposal=None))
    try:
        request = family.proposal_request(candidate)
    except CandidateRejected as rejected:
        return save_status(workspace, status.dropped("proposals", rejected.drop, proposal=None))
    if request is None or family.proposal_schema is None:
        return save_status(workspace, status.passed("proposals", proposal=None))
    prompt = load_prompt(family.prompts_dir, request.prompt)
    key = _input_key(options, prompt, prompt.render(request.values), family.proposal_schema)
    record = ProposalRecord(input_key=key, prompt=prompt.name, prompt_version=prompt.version)
    previous = status.proposal
    if (
        previous
        and previous.input_key == key
        and previous.decline_reason is None
        and read_proposal(workspace, family, status)
    ):
        reused = previous.model_copy(update={"cache_hit": True, "usage": LlmUsage(cache_hits=1)})
        return save_status(workspace, status.passed("proposals", proposal=reused))
    if not options.llm:
        drop = Drop(reason=LLM_NOT_CONFIGURED, detail=f"the {family.name} family needs a model: pass --llm")
        return save_status(workspace, status.dropped("proposals", drop, proposal=record))
    return _Pending(status=status, family=family, request=request, prompt=prompt, record=record)


def _ask(workspace: Workspace, client: LlmClient, pending: _Pending) -> CandidateStatus:
    schema = pending.family.proposal_schema
    assert schema is not None  # _prepare only defers families with a schema
    outcome = client.propose(pending.prompt, pending.request.values, schema)
    record = pending.record.model_copy(
        update={
            "cache_key": outcome.cache_key,
            "cache_hit": outcome.cache_hit,
            "usage": outcome.usage,
            "decline_reason": outcome.decline_reason,
            "raw_reply_path": str(outcome.raw_reply_path) if outcome.raw_reply_path else None,
        }
    )
    if outcome.proposal is None:
        drop = Drop(reason=outcome.skip_reason or "llm_error", detail=outcome.detail)
        return save_status(workspace, pending.status.dropped("proposals", drop, proposal=record))
    atomic_write_json(candidate_files(workspace, pending.status.ref).proposal_file, outcome.proposal)
    return save_status(workspace, pending.status.passed("proposals", proposal=record))


def propose(
    workspace: Workspace,
    families: Families,
    options: PipelineOptions,
    statuses: list[CandidateStatus],
    client_factory: Callable[[], LlmClient],
) -> list[CandidateStatus]:
    """Every candidate ready for the proposal stage, decided; in the order given."""
    prepared = [
        _prepare(workspace, options, families.by_name(status.family), status)
        for status in statuses
        if status.ready_for("proposals")
    ]
    pending = [item for item in prepared if isinstance(item, _Pending)]
    asked: dict[CandidateRef, CandidateStatus] = {}
    if pending:
        client = client_factory()
        with ThreadPoolExecutor(max_workers=options.jobs) as pool:
            for status in pool.map(lambda item: _ask(workspace, client, item), pending):
                asked[status.ref] = status
    return [asked[item.status.ref] if isinstance(item, _Pending) else item for item in prepared]

"""The on-disk reply cache: only complete, schema-valid replies, keyed by everything that shapes them.

``<llm_cache_dir>/<key[:2]>/<key>.json`` holds one reply. Writes are atomic renames, so
concurrent workers that happen to answer the same key both write a complete file and
the last rename wins; readers never see a partial one. Declined replies are never
cached: they are kept for inspection under ``<llm_cache_dir>/declined/<key>.json``,
which the cache never reads, so a rerun asks the model again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.conventions import compact_sorted_json_sha256
from traj2env_assets.layout import keyed_file

DECLINED_DIR = "declined"


class ModelRequest(BaseModel):
    """What the model is asked; with the prompt's name and version, it makes the cache key."""

    model_config = ConfigDict(extra="forbid")

    model: str
    messages: list[dict[str, str]]
    response_format: dict[str, Any]
    max_tokens: int
    reasoning_effort: str | None


def cache_key(request: ModelRequest, prompt_name: str, prompt_version: str) -> str:
    """sha256 over the request (not how it is sent: timeouts, retries, endpoint) and the prompt version."""
    asked = request.model_dump(mode="json", include=set(ModelRequest.model_fields))
    return compact_sorted_json_sha256({**asked, "prompt_name": prompt_name, "prompt_version": prompt_version})


class CachedReply(BaseModel):
    """One cached, schema-valid reply; ``content`` is the model's JSON text as received."""

    model_config = ConfigDict(extra="forbid")

    cache_key: str
    model: str
    prompt_name: str
    prompt_version: str
    content: str
    tokens_in: int
    tokens_out: int
    cost_usd: float
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class DeclinedReply(BaseModel):
    """A reply that was not used, saved so a person can see what the model said."""

    model_config = ConfigDict(extra="forbid")

    cache_key: str
    model: str
    prompt_name: str
    prompt_version: str
    reason: str
    detail: str
    finish_reason: str | None = None
    content: str | None = None
    refusal: str | None = None
    saved_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class ReplyCache:
    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir

    def path(self, key: str) -> Path:
        return keyed_file(self.cache_dir, key)

    def declined_path(self, key: str) -> Path:
        return self.cache_dir / DECLINED_DIR / f"{key}.json"

    def get(self, key: str) -> CachedReply | None:
        path = self.path(key)
        try:
            return CachedReply.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValidationError):
            # A file from an older layout or damaged by hand: treat as a miss and let the
            # next complete reply replace it.
            return None

    def put(self, reply: CachedReply) -> Path:
        return atomic_write_json(self.path(reply.cache_key), reply)

    def save_declined(self, reply: DeclinedReply) -> Path:
        return atomic_write_json(self.declined_path(reply.cache_key), reply)

"""Content-addressed file versions whose storage grows with the bytes changed.

Every file version is named by the SHA-256 of its UTF-8 text. A version is stored
either whole (``blobs/<hash>``) or, when it differs from an earlier version of the
same file by a small splice, as that splice (``deltas.jsonl``: base hash, start,
end, replacement). A small edit to a large file therefore costs the edit, not the
file. Delta chains are capped so a read never replays more than ``MAX_CHAIN``
splices.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel

from traj2env_assets.atomic_files import atomic_write_bytes
from traj2env_assets.layout import ReplayLayout
from traj2env_assets.replay.models import dump_json

MAX_CHAIN = 32


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Delta(BaseModel):
    """One line of ``deltas.jsonl``: ``id`` = ``base`` with ``[start:end]`` replaced."""

    id: str
    base: str
    start: int
    end: int
    text: str


class Unchanged(NamedTuple):
    """Characters at the start and at the end of a new version that the change making
    it did not touch (lower bounds): its splice is searched for from there."""

    prefix: int
    suffix: int


@dataclass
class _Splice:
    base: str
    start: int
    end: int
    text: str
    depth: int


_BLOCKS = (4096, 256, 16, 1)
"""Block sizes of the common prefix/suffix scans, coarse to fine."""


# Our own scans: the stdlib has no "first differing position" for strings
# (os.path.commonprefix walks character by character in Python). Comparing blocks
# runs in C; each finer size only looks inside the block where the coarser one
# stopped matching, so the work is about the matching length plus a few dozen
# comparisons, and no slice is longer than the largest block.


def _common_prefix(a: str, b: str, start: int = 0) -> int:
    """The length of the longest common prefix of ``a`` and ``b``, which share at least
    their first ``start`` characters."""
    limit = min(len(a), len(b))
    matched = start
    for block in _BLOCKS:
        while matched + block <= limit and a[matched : matched + block] == b[matched : matched + block]:
            matched += block
    return matched


def _common_suffix(a: str, b: str, limit: int, start: int = 0) -> int:
    """The length of the longest common suffix of ``a`` and ``b``, at most ``limit``
    (which must not exceed either length); they share at least their last ``start``
    characters (``start <= limit``)."""
    end_a, end_b = len(a), len(b)
    matched = start
    for block in _BLOCKS:
        while (
            matched + block <= limit
            and a[end_a - matched - block : end_a - matched] == b[end_b - matched - block : end_b - matched]
        ):
            matched += block
    return matched


class ContentStore:
    """Collects file versions during a replay; ``write`` persists them.

    Memory follows storage: a version stored as a splice keeps no text of its own
    once a newer version of the file is put; it is rebuilt from its base on demand.
    """

    def __init__(self) -> None:
        self._whole: dict[str, str] = {}
        self._splices: dict[str, _Splice] = {}
        self._recent: dict[str, str] = {}
        """Texts of spliced versions that are likely read again (the current ones)."""

    def put(self, text: str, base: str | None = None, unchanged: Unchanged | None = None) -> str:
        """Store ``text``; ``base`` is the digest of the version it was made from, and
        ``unchanged`` how much of that version the change is known to have kept."""
        digest = content_hash(text)
        if digest in self._whole or digest in self._splices:
            return digest
        splice = self._splice_against(text, base, unchanged or Unchanged(0, 0))
        if splice is None:
            self._whole[digest] = text
        else:
            self._splices[digest] = splice
            self._recent[digest] = text
            self._recent.pop(splice.base, None)
        return digest

    def get(self, digest: str) -> str:
        text = self._whole.get(digest)
        if text is not None:
            return text
        text = self._recent.get(digest)
        if text is not None:
            return text
        splice = self._splices[digest]
        base = self.get(splice.base)
        return base[: splice.start] + splice.text + base[splice.end :]

    def _splice_against(self, text: str, base: str | None, unchanged: Unchanged) -> _Splice | None:
        if base is None or (base not in self._whole and base not in self._splices):
            return None
        depth = self._splices[base].depth + 1 if base in self._splices else 1
        if depth > MAX_CHAIN:
            return None
        old = self.get(base)
        prefix = _common_prefix(old, text, unchanged.prefix)
        limit = min(len(old), len(text)) - prefix
        suffix = _common_suffix(old, text, limit, min(unchanged.suffix, limit))
        replacement = text[prefix : len(text) - suffix]
        if len(replacement) * 2 > len(text):
            return None
        return _Splice(base=base, start=prefix, end=len(old) - suffix, text=replacement, depth=depth)

    @property
    def stored_bytes(self) -> int:
        whole = sum(len(text.encode("utf-8", "surrogatepass")) for text in self._whole.values())
        spliced = sum(len(splice.text.encode("utf-8", "surrogatepass")) for splice in self._splices.values())
        return whole + spliced

    def write(self, directory: Path) -> None:
        layout = ReplayLayout(directory)
        blobs = layout.blobs_dir
        blobs.mkdir(parents=True, exist_ok=True)
        for digest, text in self._whole.items():
            atomic_write_bytes(blobs / digest, text.encode("utf-8", "surrogatepass"))
        lines = b"".join(
            dump_json(Delta(id=digest, base=s.base, start=s.start, end=s.end, text=s.text)) + b"\n"
            for digest, s in self._splices.items()
        )
        atomic_write_bytes(layout.deltas_file, lines)


class ContentReader:
    """Reads versions back from a written record directory, with a small cache."""

    def __init__(self, directory: Path, cache_size: int = 256) -> None:
        layout = ReplayLayout(directory)
        self._blobs = layout.blobs_dir
        self._deltas: dict[str, Delta] = {}
        deltas_path = layout.deltas_file
        if deltas_path.exists():
            for line in deltas_path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    delta = Delta.model_validate_json(line)
                    self._deltas[delta.id] = delta
        self._cache: OrderedDict[str, str] = OrderedDict()
        self._cache_size = cache_size

    def get(self, digest: str) -> str:
        cached = self._cache.get(digest)
        if cached is not None:
            self._cache.move_to_end(digest)
            return cached
        delta = self._deltas.get(digest)
        if delta is None:
            text = (self._blobs / digest).read_bytes().decode("utf-8", "surrogatepass")
        else:
            base = self.get(delta.base)
            text = base[: delta.start] + delta.text + base[delta.end :]
        self._cache[digest] = text
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return text

"""Keys and tokens in a Harbor task: found by detect-secrets (Yelp), redacted before staging.

Real sessions carry credentials (a key the user pasted into a request, a ``.env`` the agent
read, a token in a test fixture) and a task is made from what the session saw. Every file
of the task directory Harbor reads is scanned — ``task.toml``, ``instruction.md``,
``environment/Dockerfile`` and ``environment/workspace/``, ``solution/``, ``tests/`` — with
all of detect-secrets' plugins, its default filters, and :mod:`secret_detectors` (keys its
release does not know). Not scanned: the other files of ``environment/`` (the wheels and
qa's pinned data), third-party downloads the Dockerfile checks by sha256, not text from the
session, and which a redaction could not change anyway.

The design is "redact everywhere, let the task's own checks decide":

- Each distinct secret becomes ``[REDACTED-SECRET-<n>]`` in the task spec, and a secret of
  at least :data:`MIN_SHARED_CHARS` characters in every text of the spec (instruction,
  project, solution, tests, metadata), wherever it occurs, detected there or not: the key
  pasted in the prose of a request goes with the one in ``config.py``, and a fixture
  credential and the test that uses it stay consistent, so a test that merely carries a
  credential keeps passing. A shorter one (a weak password) is redacted on the line it
  was found only: replacing ``pass`` everywhere would rewrite the code.
- The stages redact where each of them reads the spec (``stages.task_specs``), so the
  image, calibration and the trial matrix run the redacted task: a redaction the task
  depended on fails there, honestly, and is reported as ``secret_in_task``. Deciding up
  front which files "need" a value cannot be done from the text (a test reads a fixture, a
  build reads ``.env``); running the task can.
- A finding that survives :data:`ROUNDS` of redaction drops the candidate
  (``secret_in_task``); the publish step scans the task it publishes once more.
- The secret itself is never recorded: a finding is a file, a line and a detector type.
- Ordinary digests are not secrets: a hex string of a digest's length (md5, sha1, sha256,
  sha512) flagged only for its entropy is skipped in the files traj2env generates, and in
  the session's files when its line names a hash (``assert sha256(...) == "…"``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.core.scan import scan_file
from detect_secrets.settings import default_settings
from pydantic import BaseModel, ConfigDict, Field

from traj2env_assets.atomic_files import atomic_write_text
from traj2env_assets.harbor import secret_detectors
from traj2env_assets.harbor.task_spec import TaskSpec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.layout import keyed_file

SECRET_IN_TASK = "secret_in_task"
MARKER = "[REDACTED-SECRET-{n}]"
MIN_SHARED_CHARS = 12
ROUNDS = 3
# Where the session's own text lands in a task directory; everything else traj2env writes.
SESSION_TEXT = ("instruction.md", "environment/workspace/", "solution/files/", "tests/traj2env/restore/")
# Files whose content is metadata, not something a check or the reference executes.
METADATA_FILES = frozenset({"instruction.md", "task.toml"})
_SCANNED_ENVIRONMENT = ("environment/Dockerfile", "environment/workspace/")
_DIGEST_LENGTHS = frozenset({32, 40, 64, 128})
_HEX = re.compile(r"[0-9a-fA-F]+")
_HASH_WORDS = re.compile(r"sha\d*|md5|digest|hash|checksum|etag|integrity|blake", re.IGNORECASE)
# A key's characters: a detector's capture may be a prefix (GitHub's ``ghp``) or stop short
# of the key's end (OpenAI's), so the redaction takes the whole token around it. ``=`` is
# base64 padding, so only on the right.
_TOKEN_LEFT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/")
_TOKEN_RIGHT = _TOKEN_LEFT | {"="}
# A private key is its whole block; without an end line, everything after the header.
_PRIVATE_KEY = re.compile(
    r"-{4,5} ?BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
    r"(?:.*?-{4,5} ?END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}|.*)|PuTTY-User-Key-File-2.*",
    re.DOTALL,
)
_CACHE_VERSION = f"1:{importlib.metadata.version('detect-secrets')}"
# detect-secrets keeps its settings in a process-wide singleton.
_LOCK = threading.Lock()


class SecretFinding(BaseModel):
    """Where a detector fired, never what it found."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    """Relative to the task directory."""
    line: int
    detector: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} ({self.detector})"


class Redaction(BaseModel):
    """A spec with its secrets redacted, and what that took."""

    spec: TaskSpec
    findings: list[SecretFinding] = Field(default_factory=list)
    """Every finding a redaction round acted on."""
    redacted_files: list[str] = Field(default_factory=list)
    """Task files the redaction changed (relative to the task directory)."""
    remaining: list[SecretFinding] = Field(default_factory=list)
    """Findings left after the last round: the candidate cannot be published."""

    @property
    def changes_behaviour(self) -> bool:
        """Whether a file the image, the reference or the verifier uses was changed."""
        return any(path not in METADATA_FILES for path in self.redacted_files)


class _Hit(NamedTuple):
    finding: SecretFinding
    value: str


def describe(findings: list[SecretFinding], limit: int = 5) -> str:
    more = f" (+{len(findings) - limit} more)" if len(findings) > limit else ""
    return "; ".join(str(finding) for finding in findings[:limit]) + more


@contextmanager
def _detect_secrets() -> Iterator[None]:
    """Every detect-secrets plugin and default filter, plus ours (registered by file path;
    the plugin-class mapping is cached, so it is cleared on the way in and out)."""
    with _LOCK, default_settings() as settings:
        settings.configure_plugins(
            [{"name": secret_detectors.AnthropicKeyDetector.__name__, "path": f"file://{secret_detectors.__file__}"}]
        )
        get_mapping_from_secret_type_to_class.cache_clear()
        try:
            yield
        finally:
            get_mapping_from_secret_type_to_class.cache_clear()


def task_files(task_dir: Path) -> list[tuple[str, Path]]:
    """The scanned files of a task directory, by relative path."""
    files = []
    for path in sorted(p for p in task_dir.rglob("*") if p.is_file()):
        relative = path.relative_to(task_dir).as_posix()
        if relative.startswith("environment/") and not relative.startswith(_SCANNED_ENVIRONMENT):
            continue
        files.append((relative, path))
    return files


def _is_ordinary_digest(relative: str, detector: str, value: str, line: str) -> bool:
    if detector != "Hex High Entropy String" or len(value) not in _DIGEST_LENGTHS or not _HEX.fullmatch(value):
        return False
    return not relative.startswith(SESSION_TEXT) or bool(_HASH_WORDS.search(line))


def _scan_file(relative: str, path: Path) -> list[_Hit]:
    """One file's hits, values included (call inside :func:`_detect_secrets`)."""
    found = list(scan_file(str(path)))
    if not found:
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    hits = []
    for secret in found:
        value = secret.secret_value or ""
        line = lines[secret.line_number - 1] if 0 < secret.line_number <= len(lines) else ""
        if _is_ordinary_digest(relative, secret.type, value, line):
            continue
        hits.append(_Hit(SecretFinding(path=relative, line=secret.line_number, detector=secret.type), value))
    return sorted(set(hits), key=lambda hit: (hit.finding.line, hit.finding.detector, hit.value))


def _cache_file(cache_dir: Path, relative: str, path: Path) -> Path:
    digest = hashlib.sha256(f"{_CACHE_VERSION}\0{relative}\0".encode())
    digest.update(path.read_bytes())
    key = digest.hexdigest()
    return keyed_file(cache_dir, key)


def _file_findings(relative: str, path: Path, cache_dir: Path | None) -> list[SecretFinding]:
    """A file's findings; with a cache, each content is scanned once per workspace (the cache
    holds locations and types only)."""
    cached = _cache_file(cache_dir, relative, path) if cache_dir else None
    if cached is not None and cached.is_file():
        return [SecretFinding(path=relative, **item) for item in json.loads(cached.read_text(encoding="utf-8"))]
    findings = [hit.finding for hit in _scan_file(relative, path)]
    if cached is not None:
        atomic_write_text(cached, json.dumps([finding.model_dump(exclude={"path"}) for finding in findings]))
    return findings


def scan_task_dir(task_dir: Path, cache_dir: Path | None = None) -> list[SecretFinding]:
    """Every finding in a written task directory (empty: nothing to redact)."""
    with _detect_secrets():
        return [
            finding for relative, path in task_files(task_dir) for finding in _file_findings(relative, path, cache_dir)
        ]


def _scan_view(spec: TaskSpec) -> TaskSpec:
    """The spec without its host files (wheels, pinned data): see the module docstring."""
    return spec.model_copy(update={"context_files": {}, "build_files": []})


def _token_around(line: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and line[start - 1] in _TOKEN_LEFT:
        start -= 1
    while end < len(line) and line[end] in _TOKEN_RIGHT:
        end += 1
    return start, end


def _target(hit: _Hit, text: str) -> tuple[str, int | None]:
    """What to redact for one hit, and the line to redact it on (None: everywhere)."""
    if hit.finding.detector == "Private Key":
        block = _PRIVATE_KEY.search(text)
        if block:
            return block.group(0), None
    lines = text.splitlines()
    number = hit.finding.line
    if not (0 < number <= len(lines)) or hit.value not in lines[number - 1]:
        # A transformed line (detect-secrets rewrites YAML and config files): the first raw
        # line that holds the value.
        number = next((i for i, line in enumerate(lines, start=1) if hit.value in line), 0)
        if not number:
            return hit.value, None
    line = lines[number - 1]
    spans = [_token_around(line, match.start(), match.end()) for match in re.finditer(re.escape(hit.value), line)]
    # The longest token the value sits in; of equal ones the last (a value follows its key).
    start, end = max(spans, key=lambda span: (span[1] - span[0], span[0]))
    token = line[start:end]
    return token, None if len(token) >= MIN_SHARED_CHARS else number


def _replace_everywhere(value: Any, replacements: dict[str, str]) -> Any:
    if isinstance(value, str):
        for secret, marker in replacements.items():
            value = value.replace(secret, marker)
        return value
    if isinstance(value, bytes):
        for secret, marker in replacements.items():
            value = value.replace(secret.encode(), marker.encode())
        return value
    if isinstance(value, dict):
        return {key: _replace_everywhere(item, replacements) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_everywhere(item, replacements) for item in value]
    return value


def _replace_on_line(spec: TaskSpec, relative: str, number: int, secret: str, marker: str) -> TaskSpec:
    """Replace ``secret`` on one line of one session file of the spec (its last occurrence)."""

    def edit(text: str) -> str:
        lines = text.splitlines(keepends=True)
        if 0 < number <= len(lines) and secret in lines[number - 1]:
            before, _, after = lines[number - 1].rpartition(secret)
            lines[number - 1] = before + marker + after
        return "".join(lines)

    def edit_bytes(content: bytes) -> bytes:
        try:
            return edit(content.decode("utf-8")).encode("utf-8")
        except UnicodeDecodeError:
            return content

    for prefix, field in (("environment/workspace/", "project_files"), ("solution/files/", "solution_files")):
        if relative.startswith(prefix):
            files = dict(getattr(spec, field))
            key = relative.removeprefix(prefix)
            if key in files:
                files[key] = edit_bytes(files[key])
            return spec.model_copy(update={field: files})
    if relative.startswith("tests/traj2env/restore/") and spec.tests is not None:
        key = relative.removeprefix("tests/traj2env/restore/")
        test_files = dict(spec.tests.test_files)
        if key in test_files:
            test_files[key] = edit(test_files[key])
        return spec.model_copy(update={"tests": spec.tests.model_copy(update={"test_files": test_files})})
    if relative == "instruction.md":
        return spec.model_copy(update={"instruction": edit(spec.instruction.rstrip() + "\n")})
    return spec  # a file traj2env generates: the next scan still finds it


def _written_files(task_dir: Path) -> dict[str, bytes]:
    return {relative: path.read_bytes() for relative, path in task_files(task_dir)}


def redact_task_spec(spec: TaskSpec, cache_dir: Path | None = None) -> Redaction:
    """The spec with every secret found in its task directory redacted (see the module
    docstring); ``remaining`` is what :data:`ROUNDS` of redaction could not remove."""
    with tempfile.TemporaryDirectory(prefix="traj2env-secrets-") as scratch:
        original = write_task(_scan_view(spec), Path(scratch) / "0").path
        findings = scan_task_dir(original, cache_dir)
        if not findings:
            return Redaction(spec=spec)
        acted: list[SecretFinding] = []
        markers: dict[str, str] = {}
        current, task_dir = spec, original
        for round_number in range(1, ROUNDS + 1):
            if not findings:
                break
            acted.extend(findings)
            everywhere: dict[str, str] = {}
            for relative in sorted({finding.path for finding in findings}):
                path = task_dir / relative
                text = path.read_text(encoding="utf-8", errors="replace")
                with _detect_secrets():
                    hits = _scan_file(relative, path)
                for hit in hits:
                    secret, line = _target(hit, text)
                    marker = markers.setdefault(secret, MARKER.format(n=len(markers) + 1))
                    if line is None:
                        everywhere[secret] = marker
                    else:
                        current = _replace_on_line(current, relative, line, secret, marker)
            # Longest first: a secret inside a longer one must not split it.
            ordered = dict(sorted(everywhere.items(), key=lambda item: -len(item[0])))
            current = TaskSpec.model_validate(_replace_everywhere(current.model_dump(), ordered))
            task_dir = write_task(_scan_view(current), Path(scratch) / str(round_number)).path
            findings = scan_task_dir(task_dir, cache_dir)
        before, after = _written_files(original), _written_files(task_dir)
        changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
        unique = sorted(set(acted), key=lambda finding: (finding.path, finding.line, finding.detector))
        return Redaction(spec=current, findings=unique, redacted_files=changed, remaining=findings)

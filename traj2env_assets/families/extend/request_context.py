"""A request that only agrees ("yes", "do it", "go ahead") is no task statement.

What the user agreed to is in the assistant's last message before the request: the task
states the request with that message quoted. ``needs_context`` decides which requests
need it: fewer than ``MIN_WORDS`` words, only words of agreement ("implement the plan",
"yes to all"), or a few words opening with a yes ("yes do the quickstart"). ``assistant_messages``
reads the assistant's last message before each such request from the session's ATIF
document (streamed, so a large session costs no memory); a request with no such message
is ``request_needs_context``.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

from atif import Step

from traj2env_assets.replay.stream import read_streamed

MIN_WORDS = 3
MAX_WORDS_AFTER_YES = 6
_YES = frozenset(["yes", "y", "yep", "yeah", "yup", "ok", "okay", "sure", "agreed"])
MAX_QUOTED_CHARS = 8000
"""A longer message keeps its end: where an assistant asks what to do next."""
_AGREEMENT = frozenset(
    [
        "yes",
        "y",
        "yep",
        "yeah",
        "yup",
        "ok",
        "okay",
        "k",
        "sure",
        "please",
        "pls",
        "do",
        "it",
        "that",
        "go",
        "ahead",
        "on",
        "for",
        "proceed",
        "continue",
        "carry",
        "sounds",
        "good",
        "great",
        "fine",
        "perfect",
        "lgtm",
        "thanks",
        "thank",
        "you",
        "let's",
        "lets",
        "agreed",
        "approve",
        "approved",
        "right",
        "correct",
        "absolutely",
        "definitely",
        "now",
        "all",
        "of",
        "them",
        "both",
        "this",
        "the",
        "option",
        "plan",
        "implement",
        "execute",
        "start",
        "resume",
        "to",
        "again",
        "can",
        "run",
    ]
)
_WORD = re.compile(r"[a-z0-9']+")


def needs_context(request: str) -> bool:
    """A short request, or one made only of agreement, does not say what to build."""
    words = _WORD.findall(request.lower())
    if len(words) < MIN_WORDS or all(word in _AGREEMENT for word in words):
        return True
    return words[0] in _YES and len(words) <= MAX_WORDS_AFTER_YES


def _text(step: Step) -> str:
    message = step.message
    text = (
        message if isinstance(message, str) else "\n".join(part.text or "" for part in message if part.type == "text")
    )
    return text.strip()


def assistant_messages(trajectory_path: Path, step_ids: Collection[int]) -> dict[int, str]:
    """For each user step in ``step_ids``: the text of the last assistant message before it
    (steps without text, such as tool calls alone, are passed over). Steps with none are absent."""
    found: dict[int, str] = {}
    last: str | None = None
    for step in read_streamed(trajectory_path).steps():
        if step.is_copied_context:
            continue
        if step.source == "agent" and (text := _text(step)):
            last = text
        elif step.source == "user" and step.step_id in step_ids and last is not None:
            found[step.step_id] = last
    return found


class RequestContexts:
    """The assistant messages before the requests in ``step_ids``, read from the document
    on the first look-up only: most sessions never need them."""

    def __init__(self, trajectory_path: Path | None, step_ids: Collection[int]) -> None:
        self._path, self._step_ids = trajectory_path, set(step_ids)
        self._found: dict[int, str] | None = None

    def get(self, step_id: int) -> str | None:
        if self._path is None or step_id not in self._step_ids:
            return None
        if self._found is None:
            self._found = assistant_messages(self._path, self._step_ids)
        return self._found.get(step_id)


def stated_request(request: str, context: str | None) -> str:
    """The request as the task states it: with the assistant's message it answered, quoted."""
    if context is None:
        return request.strip()
    quoted = context if len(context) <= MAX_QUOTED_CHARS else "…" + context[-MAX_QUOTED_CHARS:]
    block = "\n".join(f"> {line}" if line else ">" for line in quoted.splitlines())
    return f"The assistant proposed:\n\n{block}\n\nThe user answered: {request.strip()}"

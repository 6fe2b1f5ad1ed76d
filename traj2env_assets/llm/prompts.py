"""Prompt files that live next to each family, with a version that enters the LLM cache key.

A prompt is ``<family package>/prompts/<name>.md``: YAML front matter with a ``version``,
then the template. Placeholders are ``$name`` or ``${name}`` (``$$`` is a literal ``$``),
because prompts quote code and JSON whose braces would break ``str.format``. Bump the
version whenever the meaning of the prompt changes, so cached replies to the old prompt
are no longer used even where the rendered text happens to stay the same.

    ---
    version: 2
    description: Ask for an interface contract and candidate tests.
    ---
    The user asked: $request
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from string import Template
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

FRONT_MATTER_FENCE = "---"


class PromptError(ValueError):
    """A prompt file that cannot be used, or values that do not fit its placeholders."""


class PromptFrontMatter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str
    description: str = ""

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        # ``version: 2`` reads as an int in YAML; the cache key wants the text.
        return str(value) if isinstance(value, int | float) else value


class Prompt(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    template: str

    def placeholders(self) -> set[str]:
        return set(Template(self.template).get_identifiers())

    def render(self, values: Mapping[str, object]) -> str:
        """Fill every placeholder; a missing or unused value is an error so prompt and code stay in step."""
        expected = self.placeholders()
        missing = sorted(expected - values.keys())
        unused = sorted(values.keys() - expected)
        if missing or unused:
            raise PromptError(f"prompt {self.name!r} v{self.version}: missing values {missing}, unused values {unused}")
        return Template(self.template).substitute({key: str(value) for key, value in values.items()})


def load_prompt(prompts_dir: Path, name: str) -> Prompt:
    """Read ``<prompts_dir>/<name>.md``; families pass ``Path(__file__).parent / "prompts"``."""
    path = prompts_dir / f"{name}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PromptError(f"cannot read prompt {path}: {exc}") from exc
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != FRONT_MATTER_FENCE:
        raise PromptError(f"prompt {path} must start with '---' front matter holding its version")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == FRONT_MATTER_FENCE)
    except StopIteration as exc:
        raise PromptError(f"prompt {path}: front matter is not closed with '---'") from exc
    try:
        front = PromptFrontMatter.model_validate(yaml.safe_load("".join(lines[1:end])) or {})
    except (yaml.YAMLError, ValidationError) as exc:
        raise PromptError(f"prompt {path}: invalid front matter: {exc}") from exc
    return Prompt(name=name, version=front.version, template="".join(lines[end + 1 :]).strip() + "\n")

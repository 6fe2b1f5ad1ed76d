from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.llm.prompts import PromptError, load_prompt
from traj2env_assets_tests.llm.helpers import PROMPTS_DIR


def test_prompt_file_gives_name_version_and_template() -> None:
    prompt = load_prompt(PROMPTS_DIR, "propose_title")

    assert (prompt.name, prompt.version) == ("propose_title", "1")
    assert prompt.placeholders() == {"request"}
    assert prompt.render({"request": "Add a --json flag"}).endswith("Request: Add a --json flag\n")


def test_prompt_keeps_braces_and_escapes_dollars(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text('---\nversion: "2026-01"\n---\nReturn {"cost": "$$${amount}"} for $name.\n')

    prompt = load_prompt(tmp_path, "p")

    assert prompt.version == "2026-01"
    assert prompt.render({"amount": 5, "name": "x"}) == 'Return {"cost": "$5"} for x.\n'


@pytest.mark.parametrize(
    ("values", "message"),
    [({}, r"missing values \['request'\]"), ({"request": "a", "extra": "b"}, r"unused values \['extra'\]")],
)
def test_prompt_values_must_match_placeholders(values: dict[str, object], message: str) -> None:
    with pytest.raises(PromptError, match=message):
        load_prompt(PROMPTS_DIR, "propose_title").render(values)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter\n", "must start with '---'"),
        ("---\nversion: 1\nno end\n", "not closed"),
        ("---\ndescription: no version\n---\nbody\n", "version"),
        ("---\nversion: 1\nauthor: someone\n---\nbody\n", "author"),
    ],
)
def test_prompt_without_a_usable_version_is_rejected(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "p.md").write_text(text)

    with pytest.raises(PromptError, match=message):
        load_prompt(tmp_path, "p")


def test_missing_prompt_file_is_a_prompt_error(tmp_path: Path) -> None:
    with pytest.raises(PromptError, match="cannot read prompt"):
        load_prompt(tmp_path, "absent")

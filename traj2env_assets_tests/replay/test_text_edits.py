"""Exact-text edits: the texts they give, and the unchanged ends they report to the store."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traj2env_assets.replay.text_edits import (
    Edited,
    EditError,
    Replacement,
    apply_against_original,
    apply_sequential,
)

SNIPPETS = st.text(alphabet="abc\n", max_size=4)


def _replaced(content: str, edits: list[Replacement]) -> str:
    """Claude Code's semantics spelled with str.replace, as replay applied them before."""
    for edit in edits:
        if not edit.old:
            if content:
                raise EditError("old_text_not_found")
            content = edit.new
        elif edit.old not in content:
            raise EditError("old_text_not_found")
        else:
            content = (
                content.replace(edit.old, edit.new) if edit.replace_all else content.replace(edit.old, edit.new, 1)
            )
    return content


def _keeps_its_ends(original: str, edited: Edited) -> bool:
    prefix, suffix = edited.unchanged
    text = edited.text
    shorter = min(len(original), len(text))
    return (
        prefix <= shorter
        and suffix <= shorter
        and original[:prefix] == text[:prefix]
        and original[len(original) - suffix :] == text[len(text) - suffix :]
    )


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet="abc\n", max_size=30),
    st.lists(st.builds(Replacement, SNIPPETS, SNIPPETS, st.booleans()), min_size=1, max_size=4),
)
def test_sequential_edits_replace_as_str_replace_and_report_kept_ends(content: str, edits: list[Replacement]) -> None:
    try:
        expected = _replaced(content, edits)
    except EditError as error:
        with pytest.raises(EditError) as raised:
            apply_sequential(content, edits)
        assert raised.value.reason == error.reason
        return
    edited = apply_sequential(content, edits)
    assert edited.text == expected
    assert _keeps_its_ends(content, edited)


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet="abc\n", max_size=30),
    st.lists(st.builds(Replacement, SNIPPETS, SNIPPETS), min_size=1, max_size=3),
)
def test_edits_against_the_original_report_kept_ends(content: str, edits: list[Replacement]) -> None:
    try:
        edited = apply_against_original(content, edits)
    except EditError:
        return
    assert _keeps_its_ends(content, edited)

"""The content store's block scans find the same splice as a character-by-character scan."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from traj2env_assets.replay.content_store import ContentStore, Unchanged, _common_prefix, _common_suffix


def _reference_prefix(a: str, b: str) -> int:
    length = 0
    while length < min(len(a), len(b)) and a[length] == b[length]:
        length += 1
    return length


def _reference_suffix(a: str, b: str, limit: int) -> int:
    length = 0
    while length < limit and a[len(a) - 1 - length] == b[len(b) - 1 - length]:
        length += 1
    return length


# Long texts from a few short pieces: the scans' block sizes (up to 4,096) are crossed.
TEXTS = st.builds(
    lambda piece, times: piece * times,
    st.text(alphabet="ab\n\u00e9\U0001f600", min_size=1, max_size=7),
    st.integers(min_value=0, max_value=3000),
)


def _edit(text: str, data: st.DataObject, alphabet: str | None = "ab\n\u00e9") -> tuple[int, int, str]:
    """A span of ``text`` and ``text`` with that span replaced by a short drawn text."""
    start = data.draw(st.integers(min_value=0, max_value=len(text)))
    end = data.draw(st.integers(min_value=start, max_value=len(text)))
    inserted = st.text(max_size=20) if alphabet is None else st.text(alphabet=alphabet, max_size=20)
    return start, end, text[:start] + data.draw(inserted) + text[end:]


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.data())
def test_common_prefix_and_suffix_match_a_character_scan(text: str, data: st.DataObject) -> None:
    _, _, other = _edit(text, data)
    prefix = _common_prefix(text, other)
    assert prefix == _reference_prefix(text, other)
    limit = min(len(text), len(other)) - prefix
    assert _common_suffix(text, other, limit) == _reference_suffix(text, other, limit)


@settings(max_examples=100, deadline=None)
@given(TEXTS, st.data())
def test_a_spliced_version_reads_back_exactly(text: str, data: st.DataObject) -> None:
    _, _, edited = _edit(text, data, alphabet=None)
    store = ContentStore()
    base = store.put(text)
    assert store.get(store.put(edited, base)) == edited


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.data())
def test_a_known_unchanged_prefix_and_suffix_give_the_same_splice(text: str, data: st.DataObject) -> None:
    start, end, edited = _edit(text, data)
    # Any lower bounds of what the change kept: at most what it kept.
    kept = Unchanged(
        data.draw(st.integers(min_value=0, max_value=start)),
        data.draw(st.integers(min_value=0, max_value=len(text) - end)),
    )
    searched, hinted = ContentStore(), ContentStore()
    searched.put(edited, searched.put(text))
    hinted.put(edited, hinted.put(text), kept)
    assert hinted._splices == searched._splices
    assert hinted._whole == searched._whole

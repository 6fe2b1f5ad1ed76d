"""parse_shell's shortcut for plain commands reads them exactly as the full reader does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from traj2env_assets.replay.shell_syntax import _Reader, parse_shell

# Blanks the reader splits at, other whitespace it keeps inside words, and the
# characters that make it do more than split.
PLAIN = "az09-_=./:,+@%^!{}\u00e9 \t\r\x0b\x0c\u00a0"
SPECIAL = "'\"\\$`<>&|;()*?[\n#~"


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(alphabet=PLAIN, max_size=40), st.text(alphabet=PLAIN + SPECIAL, max_size=40)))
def test_plain_commands_parse_as_the_full_reader_parses_them(text: str) -> None:
    assert parse_shell(text) == _Reader(text).parse()


def test_a_plain_command_is_one_command_of_literal_words() -> None:
    parsed = parse_shell("python -m pytest -q\ttests/test_m.py -k case_1 ")
    assert parsed.complete
    assert [command.argv for command in parsed.commands] == [
        ["python", "-m", "pytest", "-q", "tests/test_m.py", "-k", "case_1"]
    ]
    assert all(word.literal and not word.quoted for word in parsed.commands[0].words)

"""A small POSIX-shell reader: simple commands, redirections and here-documents.

Why our own reader: ``shlex`` drops the quoting of each word (we must know whether a
``$`` would have been expanded) and knows nothing of here-documents; ``bashlex`` is
not installed (and is GPL). Only the subset that decides file effects is modelled:
words with their quoting, the operators ``; && || | & ( )``, redirections and
here-document bodies. Anything dynamic (``$x``, ``$(...)``, backticks, globs, ``~``)
is flagged on the word, never evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SEPARATORS = ("&&", "||", ";;", ";", "&", "|", "(", ")", "\n")
_OPERATOR_START = frozenset("<>&|;()\n")
_PLAIN_RUN = re.compile(r"[^\s'\"\\$`<>&|;()*?\[]*")
_REDIRECTS = ("<<<", "<<-", "&>>", "<<", ">>", ">&", "<&", "&>", ">|", "<>", "<", ">")
_NOT_PLAIN = re.compile(r"['\"\\$`<>&|;()*?\[\n#~]")
"""A character that may make the reader do more than split words at blanks: quotes,
escapes, substitutions, operators, newlines, comments, globs and ``~``."""
_BLANK_SEPARATED = re.compile(r"[^ \t\r]+")


@dataclass(slots=True)
class Word:
    text: str = ""
    expands: bool = False
    """An unquoted or double-quoted ``$``/backtick: the shell would substitute here."""
    glob: bool = False
    """An unquoted ``*``, ``?`` or ``[``."""
    tilde: bool = False
    """Starts with an unquoted ``~`` (home directory)."""
    quoted: bool = False

    @property
    def literal(self) -> bool:
        return not (self.expands or self.glob or self.tilde)


@dataclass
class HereDoc:
    delimiter: str
    quoted: bool
    strip_tabs: bool
    body: str = ""
    terminated: bool = False


@dataclass
class Redirect:
    op: str
    fd: int | None
    target: Word | None = None
    heredoc: HereDoc | None = None


@dataclass(slots=True)
class SimpleCommand:
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    connector: str = ";"
    """The operator before this command: ``;``, ``&&``, ``||``, ``|``, ``&`` or ``\\n``."""
    subshell_depth: int = 0

    @property
    def argv(self) -> list[str]:
        return [word.text for word in self.words]


@dataclass
class ParsedShell:
    commands: list[SimpleCommand]
    complete: bool = True
    """False when a quote, substitution or here-document was left open."""


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.complete = True
        self.commands: list[SimpleCommand] = []
        self.current = SimpleCommand()
        self.word: Word | None = None
        self.pending_heredocs: list[HereDoc] = []
        self.expect_target: Redirect | None = None
        self.depth = 0

    def parse(self) -> ParsedShell:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r":
                self._end_word()
                self.pos += 1
            elif char == "\\" and text.startswith("\\\n", self.pos):
                self.pos += 2
            elif char == "#" and self.word is None:
                newline = text.find("\n", self.pos)
                self.pos = len(text) if newline < 0 else newline
            elif char == "'":
                self._single_quoted()
            elif char == '"':
                self._double_quoted()
            elif char == "\\":
                self._word().text += text[self.pos + 1 : self.pos + 2]
                self._word().quoted = True
                self.pos += 2
            elif char == "$":
                self._dollar(self._word())
            elif char == "`":
                self._backtick(self._word())
            elif char in _OPERATOR_START and self._at_operator():
                continue
            else:
                word = self._word()
                if char in "*?[":
                    word.glob = True
                if char == "~" and not word.text:
                    word.tilde = True
                # Take the whole run of ordinary characters at once (speed on long scripts).
                run = _PLAIN_RUN.match(text, self.pos + 1)
                end = run.end() if run else self.pos + 1
                word.text += text[self.pos : end]
                self.pos = end
        self._end_word()
        self._end_command("\n")
        if self.pending_heredocs or self.expect_target is not None:
            self.complete = False
        return ParsedShell(commands=self.commands, complete=self.complete)

    def _word(self) -> Word:
        if self.word is None:
            self.word = Word()
        return self.word

    def _end_word(self) -> None:
        if self.word is None:
            return
        word, self.word = self.word, None
        if self.expect_target is not None:
            redirect, self.expect_target = self.expect_target, None
            if redirect.heredoc is not None:
                redirect.heredoc.delimiter = word.text
                redirect.heredoc.quoted = word.quoted
                self.pending_heredocs.append(redirect.heredoc)
            else:
                redirect.target = word
            return
        self.current.words.append(word)

    def _end_command(self, connector: str) -> None:
        if self.current.words or self.current.redirects:
            self.commands.append(self.current)
        self.current = SimpleCommand(connector=connector, subshell_depth=self.depth)

    def _at_operator(self) -> bool:
        text, pos = self.text, self.pos
        if text.startswith(("<(", ">("), pos):
            # Process substitution: an opaque word, like $(...).
            word = self._word()
            end = _matching(text, pos + 1, "(", ")")
            if end < 0:
                self.complete = False
                end = len(text) - 1
            word.text += text[pos : end + 1]
            word.expands = True
            self.pos = end + 1
            return True
        for op in _REDIRECTS:
            if text.startswith(op, pos):
                fd = None
                # Only ASCII digits name a descriptor ("²".isdigit() is true too).
                if (
                    self.word is not None
                    and self.word.text.isascii()
                    and self.word.text.isdigit()
                    and not self.word.quoted
                ):
                    fd = int(self.word.text)
                    self.word = None
                self._end_word()
                redirect = Redirect(op=op, fd=fd)
                if op in ("<<", "<<-"):
                    redirect.heredoc = HereDoc(delimiter="", quoted=False, strip_tabs=op == "<<-")
                self.current.redirects.append(redirect)
                self.expect_target = redirect
                self.pos += len(op)
                return True
        for op in _SEPARATORS:
            if text.startswith(op, pos):
                self._end_word()
                if self.expect_target is not None:
                    self.complete = False
                    self.expect_target = None
                if op == "(":
                    self.depth += 1
                elif op == ")":
                    self.depth = max(0, self.depth - 1)
                self.pos += len(op)
                self._end_command(op)
                if op == "\n":
                    self._read_heredoc_bodies()
                return True
        return False

    def _read_heredoc_bodies(self) -> None:
        text = self.text
        for heredoc in self.pending_heredocs:
            lines: list[str] = []
            while self.pos < len(text):
                end = text.find("\n", self.pos)
                line = text[self.pos :] if end < 0 else text[self.pos : end]
                self.pos = len(text) if end < 0 else end + 1
                compare = line.lstrip("\t") if heredoc.strip_tabs else line
                if compare == heredoc.delimiter:
                    heredoc.terminated = True
                    break
                lines.append(compare)
            heredoc.body = "".join(line + "\n" for line in lines)
            if not heredoc.terminated:
                self.complete = False
        self.pending_heredocs = []

    def _single_quoted(self) -> None:
        end = self.text.find("'", self.pos + 1)
        word = self._word()
        word.quoted = True
        if end < 0:
            self.complete = False
            end = len(self.text)
        word.text += self.text[self.pos + 1 : end]
        self.pos = end + 1

    def _double_quoted(self) -> None:
        text = self.text
        word = self._word()
        word.quoted = True
        self.pos += 1
        while self.pos < len(text):
            char = text[self.pos]
            if char == '"':
                self.pos += 1
                return
            if char == "\\" and self.pos + 1 < len(text) and text[self.pos + 1] in '$`"\\\n':
                if text[self.pos + 1] != "\n":
                    word.text += text[self.pos + 1]
                self.pos += 2
            elif char == "$":
                self._dollar(word)
            elif char == "`":
                self._backtick(word)
            else:
                word.text += char
                self.pos += 1
        self.complete = False

    def _dollar(self, word: Word) -> None:
        text = self.text
        following = text[self.pos + 1 : self.pos + 2]
        if following == "(" or following == "{":
            closing = ")" if following == "(" else "}"
            end = _matching(text, self.pos + 1, following, closing)
            if end < 0:
                self.complete = False
                end = len(text) - 1
            word.text += text[self.pos : end + 1]
            self.pos = end + 1
            word.expands = True
        elif following and (following.isalnum() or following in "_@*#?$!-"):
            word.text += "$"
            self.pos += 1
            word.expands = True
        else:
            word.text += "$"
            self.pos += 1

    def _backtick(self, word: Word) -> None:
        end = self.text.find("`", self.pos + 1)
        if end < 0:
            self.complete = False
            end = len(self.text) - 1
        word.text += self.text[self.pos : end + 1]
        word.expands = True
        self.pos = end + 1


def _matching(text: str, start: int, opening: str, closing: str) -> int:
    depth = 0
    index = start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "'" and opening == "(":
            quote_end = text.find("'", index + 1)
            index = len(text) if quote_end < 0 else quote_end + 1
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return -1


def parse_shell(text: str) -> ParsedShell:
    """Split ``text`` into simple commands with their redirections and here-documents."""
    if _NOT_PLAIN.search(text) is None:
        # Most commands are plain words (`python -m pytest -q tests`): the reader would
        # only split them at the blanks it knows (space, tab, CR) into literal words.
        words = [Word(word) for word in _BLANK_SEPARATED.findall(text)]
        return ParsedShell(commands=[SimpleCommand(words=words)] if words else [])
    return _Reader(text).parse()


def expand_heredoc(heredoc: HereDoc) -> str | None:
    """The text a here-document feeds to its command, or None if the shell would expand it.

    A quoted delimiter means no expansion at all. Unquoted, backslash escapes of
    ``$``, backtick, backslash and newline are processed; any remaining ``$`` or
    backtick would be substituted, so the content cannot be known without guessing.
    """
    if heredoc.quoted:
        return heredoc.body
    body = heredoc.body
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            following = body[index + 1]
            if following == "\n":
                index += 2
                continue
            if following in "$`\\":
                out.append(following)
                index += 2
                continue
            out.append(char)
            index += 1
            continue
        if char == "`":
            return None
        if char == "$" and index + 1 < len(body) and (body[index + 1].isalnum() or body[index + 1] in "_{(@*#?$!-"):
            return None
        out.append(char)
        index += 1
    return "".join(out)

"""What a shell command did to project files, as operations for the virtual filesystem.

Modelled exactly: here-documents and literal redirections (``cat > f <<'EOF'``,
``tee f``, ``echo``/``printf`` of literal text, ``: > f``), ``rm``, ``mv``, ``cp``,
``mkdir``, ``touch`` and ``apply_patch <<'EOF'``. Marked lost (content no longer
known): targets of ``sed -i``/``perl -i``, formatters run with a write flag, files
restored by ``git checkout -- f``, redirect targets whose content is not literal, and
known files named in an inline script that writes files. Commands that may change
files we cannot see (scripts, builds, ``npm run``, ``git checkout <branch>``) make the
command ``opaque``; ``git`` commands that rewrite the work tree lose every file.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from traj2env_assets.replay.models import ShellEffects
from traj2env_assets.replay.read_pieces import ReadChunk
from traj2env_assets.replay.shell_syntax import Redirect, SimpleCommand, Word, expand_heredoc, parse_shell


@dataclass(frozen=True)
class PathRef:
    raw: str
    cwd: str | None


@dataclass(frozen=True)
class WriteFrom:
    """Write (or append) the concatenation of literal text and file contents."""

    target: PathRef
    parts: tuple[str | PathRef, ...]
    append: bool
    action: str


@dataclass(frozen=True)
class LosePath:
    target: PathRef
    reason: str
    pattern: bool = False
    """``target`` is a glob matched against the files replay knows."""


@dataclass(frozen=True)
class LoseUnder:
    directory: PathRef
    reason: str


@dataclass(frozen=True)
class LoseAll:
    reason: str


@dataclass(frozen=True)
class LoseMentioned:
    """Known files whose path or name appears in ``text`` become lost."""

    text: str
    reason: str


@dataclass(frozen=True)
class RemovePath:
    target: PathRef
    recursive: bool
    pattern: bool


@dataclass(frozen=True)
class MovePath:
    source: PathRef
    destination: PathRef
    keep_source: bool


@dataclass(frozen=True)
class MakeDir:
    target: PathRef


@dataclass(frozen=True)
class Touch:
    target: PathRef


@dataclass(frozen=True)
class PatchText:
    text: str
    cwd: str | None


FileOp = (
    WriteFrom | LosePath | LoseUnder | LoseAll | LoseMentioned | RemovePath | MovePath | MakeDir | Touch | PatchText
)
Stream = tuple[str | PathRef, ...]
"""What flows through stdin/stdout when it is known: literal text and file contents."""


class ShellContext(Protocol):
    """What the analysis may ask about the session at this point."""

    def resolve_dir(self, raw: str, cwd: str | None) -> object:
        """The absolute directory ``cd raw`` leads to, as a string, or anything else if unknown."""

    def npm_scripts(self, cwd: str) -> Mapping[str, str] | None:
        """The ``scripts`` of the known package.json in absolute directory ``cwd``."""


@dataclass
class ShellAnalysis:
    ops: list[FileOp] = field(default_factory=list)
    effects: ShellEffects = "none"

    def raise_to(self, level: ShellEffects) -> None:
        order = {"none": 0, "tracked": 1, "opaque": 2}
        if order[level] > order[self.effects]:
            self.effects = level


READ_ONLY = frozenset(
    """ls ll la cat head tail less more grep egrep fgrep rg ag ack fd wc echo printf pwd which type whereis
    whoami date diff cmp tree sort uniq cut tr awk gawk sed jq yq stat file du df env printenv true false test [ [[
    sleep basename dirname realpath readlink uname id hostname ps history clear exit set export unset xxd od hexdump
    md5sum sha1sum sha256sum shasum column nl tac rev man help alias cd pushd popd : lsof top free uptime
    pytest mypy tsc tsgo pyright node-test vitest jest mocha""".split()
)
"""Commands that read files only (their redirections are still honoured)."""

_READ_ONLY_SUBCOMMANDS = {
    "npm": frozenset({"ls", "list", "view", "outdated", "help", "config", "--version", "-v"}),
    "pnpm": frozenset({"ls", "list", "outdated", "--version"}),
    "yarn": frozenset({"list", "info", "--version"}),
    "pip": frozenset({"list", "show", "freeze", "--version", "check"}),
    "pip3": frozenset({"list", "show", "freeze", "--version", "check"}),
    "cargo": frozenset({"check", "test", "clippy", "--version", "tree", "metadata"}),
    "go": frozenset({"test", "vet", "version", "list", "env"}),
}
_READ_ONLY_PYTHON_MODULES = frozenset(
    "pytest unittest mypy pyright flake8 pylint pyflakes json.tool py_compile compileall doctest".split()
)
_RUNNERS = {"uv": "run", "poetry": "run", "pdm": "run", "hatch": "run", "pipenv": "run", "pnpm": "exec", "npm": "exec"}
_NPM_CLIENTS = frozenset({"npm", "pnpm", "yarn", "bun"})
_WRAPPERS = frozenset({"sudo", "time", "nohup", "command", "exec", "builtin", "nice", "stdbuf"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_INTERPRETERS = frozenset({"python", "python3", "node", "ruby", "perl", "deno", "bun", "php"})
_WRITE_HINT = re.compile(
    r"write_text|write_bytes|\.write\(|open\([^)]*['\"][wax+]|writeFile|appendFile|createWriteStream|"
    r"os\.remove|os\.unlink|unlink|rename|shutil\.|rmSync|rmdir|File\.write|json\.dump\(|\.save\("
)
_GIT_READ_ONLY = frozenset(
    """status diff log show add commit branch rev-parse ls-files blame grep remote config fetch tag push init
    describe shortlog reflog ls-tree cat-file show-ref for-each-ref help version worktree""".split()
)
_GIT_REWRITES = frozenset(
    "checkout switch reset stash pull merge rebase cherry-pick revert am apply clean restore".split()
)
_FORMATTERS = {
    "prettier": ("--write", "-w"),
    "biome": ("--write", "--apply", "--fix", "--apply-unsafe"),
    "eslint": ("--fix",),
    "black": ("",),
    "isort": ("",),
    "autopep8": ("-i", "--in-place"),
    "gofmt": ("-w",),
    "rustfmt": ("",),
}
_DISCARDED = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")


def _dynamic(words: list[Word]) -> bool:
    return any(not word.literal for word in words)


def _strip_wrappers(words: list[Word]) -> list[Word]:
    index = 0
    while index < len(words):
        text = words[index].text
        if "=" in text and not text.startswith("=") and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", text):
            index += 1
        elif text in _WRAPPERS:
            index += 1
        elif text in ("npx", "bunx", "pnpx"):
            index += 1
            while index < len(words) and words[index].text.startswith("-"):
                index += 1
        elif text in _RUNNERS and index + 1 < len(words) and words[index + 1].text == _RUNNERS[text]:
            index += 2
            while index < len(words) and words[index].text.startswith("-"):
                index += 1
        elif text == "env":
            index += 1
            while index < len(words) and (words[index].text.startswith("-") or "=" in words[index].text):
                index += 1
        elif text == "timeout":
            index += 1
            while index < len(words) and (words[index].text.startswith("-") or words[index].text[:1].isdigit()):
                index += 1
        else:
            break
    return words[index:]


def _git_leaves_work_tree(sub: str, args: list[str]) -> bool:
    """git commands named like work-tree rewrites that only touch the index, refs or
    nothing (`git reset` without --hard, `git restore --staged`, dry runs)."""
    if sub == "stash":
        return args[:1] in (["list"], ["show"])
    if sub == "reset":
        return not any(a in ("--hard", "--merge", "--keep") for a in args)
    if sub == "restore":
        return ("--staged" in args or "-S" in args) and not ("--worktree" in args or "-W" in args)
    if sub == "clean":
        return any(a in ("-n", "--dry-run") for a in args)
    if sub == "apply":
        return any(a in ("--check", "--stat", "--numstat", "--summary", "--cached") for a in args)
    return False


def _printf(format_word: str, args: list[str]) -> str | None:
    directives = re.findall(r"%.", format_word)
    if any(d not in ("%s", "%%") for d in directives):
        return None
    slots = directives.count("%s")
    fmt = format_word
    if "\\" in fmt:
        fmt = fmt.encode("latin-1", "backslashreplace").decode("unicode_escape")
    if slots == 0:
        return fmt.replace("%%", "%")
    out: list[str] = []
    rest = list(args) or [""]
    while rest or not out:
        chunk, rest = rest[:slots], rest[slots:]
        chunk += [""] * (slots - len(chunk))
        piece = fmt.replace("%%", "\x00")
        for value in chunk:
            piece = piece.replace("%s", value, 1)
        out.append(piece.replace("\x00", "%"))
    return "".join(out)


def _echo(args: list[str]) -> str:
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        flags = args.pop(0)
        newline = newline and "n" not in flags
        escapes = "e" in flags or (escapes and "E" not in flags)
    text = " ".join(args)
    if escapes and "\\" in text:
        text = text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    return text + ("\n" if newline else "")


class _CommandReader:
    def __init__(self, cwd: str | None, context: ShellContext, depth: int) -> None:
        self.cwd = cwd
        self.context = context
        self.nesting = depth
        self.analysis = ShellAnalysis()
        self.saved_cwds: list[str | None] = []
        self.depth = 0
        self.last_stdout: Stream | None = None

    def ref(self, word: Word) -> PathRef | None:
        # A `~` path is kept so that resolution refuses and records it (home_relative).
        static = not word.expands and not word.glob
        return PathRef(word.text, self.cwd) if static else None

    def run(self, command: SimpleCommand) -> None:
        while command.subshell_depth > self.depth:
            self.saved_cwds.append(self.cwd)
            self.depth += 1
        while command.subshell_depth < self.depth:
            self.cwd = self.saved_cwds.pop()
            self.depth -= 1
        piped_in = command.connector == "|"
        stdin = self._stdin(command.redirects, self.last_stdout if piped_in else None)
        words = _strip_wrappers(command.words)
        name = posixpath.basename(words[0].text) if words else ""
        stdout = self._command(name, words, stdin)
        self._redirect_outputs(command.redirects, stdout)
        self.last_stdout = stdout

    def _stdin(self, redirects: list[Redirect], piped: Stream | None) -> Stream | None:
        stdin = piped
        for redirect in redirects:
            if redirect.heredoc is not None:
                text = expand_heredoc(redirect.heredoc)
                stdin = None if text is None else (text,)
            elif redirect.op == "<<<" and redirect.target is not None:
                stdin = (redirect.target.text + "\n",) if redirect.target.literal else None
            elif redirect.op == "<" and redirect.target is not None and redirect.fd in (None, 0):
                ref = self.ref(redirect.target)
                stdin = None if ref is None else (ref,)
        return stdin

    def _redirect_outputs(self, redirects: list[Redirect], stdout: Stream | None) -> None:
        for redirect in redirects:
            if redirect.op not in (">", ">>", ">|", "&>", "&>>", ">&") or redirect.target is None:
                continue
            target = redirect.target
            if redirect.op == ">&" and ((target.text.isascii() and target.text.isdigit()) or target.text == "-"):
                continue
            if target.text in _DISCARDED:
                continue
            self.analysis.raise_to("tracked")
            ref = self.ref(target)
            if ref is None:
                self.analysis.raise_to("opaque")
                continue
            writes_stdout = redirect.fd in (None, 1) and redirect.op not in ("&>", "&>>", ">&")
            append = redirect.op in (">>", "&>>")
            if writes_stdout and stdout is not None:
                action = "heredoc" if self._from_heredoc(redirects) else "redirect"
                self.analysis.ops.append(WriteFrom(ref, stdout, append, action))
            else:
                self.analysis.ops.append(LosePath(ref, "shell_output_not_literal"))

    @staticmethod
    def _from_heredoc(redirects: list[Redirect]) -> bool:
        return any(r.heredoc is not None for r in redirects)

    def _command(self, name: str, words: list[Word], stdin: Stream | None) -> Stream | None:
        args = words[1:]
        argv = [w.text for w in args]
        if name in ("cd", "pushd"):
            self._cd(args)
            return ("",)
        if name in ("", "true", ":"):
            return ("",)
        if name == "cat":
            files = [w for w in args if w.text != "-" and not w.text.startswith("-")]
            if not files:
                return stdin
            refs = [self.ref(w) for w in files]
            return None if any(r is None for r in refs) else tuple(r for r in refs if r is not None)
        if name == "echo":
            return None if _dynamic(args) else (_echo(argv),)
        if name == "printf":
            if _dynamic(args) or not argv:
                return None
            text = _printf(argv[0], argv[1:])
            return None if text is None else (text,)
        if name == "tee":
            self._tee(args, stdin)
            return stdin
        if name in ("rm", "unlink"):
            self._rm(args)
        elif name in ("mv", "cp"):
            self._move(args, keep_source=name == "cp")
        elif name == "mkdir":
            self.analysis.ops.extend(MakeDir(r) for w in args if not w.text.startswith("-") and (r := self.ref(w)))
        elif name == "touch":
            self.analysis.raise_to("tracked")
            self.analysis.ops.extend(Touch(r) for w in args if not w.text.startswith("-") and (r := self.ref(w)))
        elif name in ("apply_patch", "applypatch"):
            self._apply_patch(args, stdin)
        elif name in ("sed", "perl") and any(a.startswith(("-i", "-pi")) or a == "--in-place" for a in argv):
            self._in_place(name, args)
        elif name == "git":
            self._git(args)
        elif name in _FORMATTERS or (name == "ruff" and ("format" in argv or "--fix" in argv)):
            self._formatter(name, args)
        elif name in _READ_ONLY_SUBCOMMANDS and argv[:1] and argv[0] in _READ_ONLY_SUBCOMMANDS[name]:
            pass
        elif name in _NPM_CLIENTS and (script := _npm_script_name(name, argv)) is not None:
            self._npm_script(script)
        elif name.startswith("python") and argv[:1] == ["-m"] and argv[1:2] and argv[1] in _READ_ONLY_PYTHON_MODULES:
            pass
        elif name == "node" and "--test" in argv:
            pass
        elif name in _INTERPRETERS or name in _SHELLS or re.fullmatch(r"python3(\.\d+)?", name):
            self._interpreter(name, args, stdin)
        elif name == "ln":
            self.analysis.raise_to("tracked")
            if argv and (r := self.ref(args[-1])):
                self.analysis.ops.append(LosePath(r, "symlink"))
        elif name == "find" and any(a in ("-delete", "-exec", "-execdir", "-ok") for a in argv):
            self.analysis.raise_to("opaque")
        elif name not in READ_ONLY:
            self.analysis.raise_to("opaque")
        return None

    def _npm_script(self, script: str) -> None:
        # A script replay can read in the known package.json is judged by its body
        # (with its pre/post hooks); its file operations are not applied, only whether
        # it may change files. Unknown scripts may do anything.
        scripts = self.context.npm_scripts(self.cwd) if self.cwd is not None else None
        if scripts is None or script not in scripts or self.nesting >= 3:
            self.analysis.raise_to("opaque")
            return
        for name in (f"pre{script}", script, f"post{script}"):
            if name in scripts:
                nested = analyse_shell(scripts[name], self.cwd, self.context, self.nesting + 1)
                self.analysis.raise_to("none" if nested.effects == "none" else "opaque")

    def _cd(self, args: list[Word]) -> None:
        targets = [w for w in args if not w.text.startswith("-") or w.text == "-"]
        if not targets or not targets[0].literal or targets[0].text == "-":
            self.cwd = None
            return
        resolved = self.context.resolve_dir(targets[0].text, self.cwd)
        self.cwd = resolved if isinstance(resolved, str) else None

    def _tee(self, args: list[Word], stdin: Stream | None) -> None:
        append = any(w.text in ("-a", "--append") for w in args)
        for word in args:
            if word.text.startswith("-") or word.text in _DISCARDED:
                continue
            self.analysis.raise_to("tracked")
            ref = self.ref(word)
            if ref is None:
                self.analysis.raise_to("opaque")
            elif stdin is None:
                self.analysis.ops.append(LosePath(ref, "shell_output_not_literal"))
            else:
                self.analysis.ops.append(WriteFrom(ref, stdin, append, "heredoc"))

    def _rm(self, args: list[Word]) -> None:
        self.analysis.raise_to("tracked")
        recursive = any(re.fullmatch(r"-[a-zA-Z]*[rR][a-zA-Z]*|--recursive", w.text) for w in args)
        for word in args:
            if word.text.startswith("-"):
                continue
            if word.expands or word.tilde:
                self.analysis.raise_to("opaque")
                continue
            self.analysis.ops.append(RemovePath(PathRef(word.text, self.cwd), recursive, word.glob))

    def _move(self, args: list[Word], keep_source: bool) -> None:
        self.analysis.raise_to("tracked")
        operands = [w for w in args if not w.text.startswith("-")]
        if len(operands) < 2 or any(not w.literal for w in operands):
            self.analysis.raise_to("opaque")
            for word in operands[-1:]:
                if (ref := self.ref(word)) is not None:
                    self.analysis.ops.append(LosePath(ref, "shell_copy_unknown_source"))
            return
        destination = PathRef(operands[-1].text, self.cwd)
        for source in operands[:-1]:
            self.analysis.ops.append(MovePath(PathRef(source.text, self.cwd), destination, keep_source))

    def _apply_patch(self, args: list[Word], stdin: Stream | None) -> None:
        self.analysis.raise_to("tracked")
        if args and args[0].literal:
            self.analysis.ops.append(PatchText(args[0].text, self.cwd))
        elif stdin is not None and all(isinstance(part, str) for part in stdin):
            self.analysis.ops.append(PatchText("".join(str(part) for part in stdin), self.cwd))
        else:
            self.analysis.raise_to("opaque")

    def _in_place(self, name: str, args: list[Word]) -> None:
        self.analysis.raise_to("tracked")
        operands: list[Word] = []
        has_script_flag = False
        skip_next = False
        for word in args:
            if skip_next:
                skip_next = False
                continue
            if not word.text:
                continue  # BSD sed: `-i ''` is an empty backup suffix
            if word.text in ("-e", "-f", "--expression", "--file"):
                has_script_flag = True
                skip_next = True
            elif word.text.startswith("-") and name == "perl" and "e" in word.text[1:]:
                has_script_flag = True
                skip_next = True
            elif not word.text.startswith("-"):
                operands.append(word)
        if not has_script_flag and operands:
            operands = operands[1:]
        for word in operands:
            if word.expands or word.tilde:
                self.analysis.raise_to("opaque")
            else:
                self.analysis.ops.append(LosePath(PathRef(word.text, self.cwd), "in_place_edit", pattern=word.glob))

    def _git(self, args: list[Word]) -> None:
        argv = [w.text for w in args]
        sub_index = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
        if sub_index is None:
            return
        sub, rest = argv[sub_index], args[sub_index + 1 :]
        rest_text = [w.text for w in rest]
        if sub in ("checkout", "switch") and any(a in ("-b", "-B", "-c", "-C", "--orphan") for a in rest_text):
            return
        if _git_leaves_work_tree(sub, rest_text):
            return
        if (sub in ("checkout", "restore") and "--" in rest_text) or sub == "restore":
            if "--" in rest_text:
                paths = rest[rest_text.index("--") + 1 :]
            else:
                paths = [w for w in rest if not w.text.startswith("-")]
            self.analysis.raise_to("tracked")
            for word in paths:
                if (ref := self.ref(word)) is not None:
                    self.analysis.ops.append(LoseUnder(ref, "git_restore"))
                else:
                    self.analysis.ops.append(LoseAll("git_restore"))
            return
        if sub == "rm":
            self._rm([w for w in rest if w.text not in ("--cached",)] if "--cached" not in rest_text else [])
            return
        if sub == "mv":
            self._move(rest, keep_source=False)
            return
        if sub in _GIT_REWRITES:
            self.analysis.raise_to("tracked")
            self.analysis.ops.append(LoseAll(f"git_{sub}"))
        elif sub not in _GIT_READ_ONLY:
            self.analysis.raise_to("opaque")

    def _formatter(self, name: str, args: list[Word]) -> None:
        flags = _FORMATTERS.get(name, ("",))
        argv = [w.text for w in args]
        writes = name == "ruff" or "" in flags or any(a in flags for a in argv)
        if not writes:
            return
        self.analysis.raise_to("tracked")
        subcommands = ("check", "format", "lint", "run", "ci")
        operands = [w for w in args if not w.text.startswith("-") and w.text not in subcommands]
        if not operands:
            operands = [Word(text=".")]
        for word in operands:
            ref = self.ref(word)
            if ref is None:
                self.analysis.ops.append(LoseAll("formatter"))
            else:
                self.analysis.ops.append(LoseUnder(ref, "formatter"))

    def _interpreter(self, name: str, args: list[Word], stdin: Stream | None) -> None:
        argv = [w.text for w in args]
        inline: str | None = None
        for flag in ("-c", "-e", "--eval", "-E"):
            if flag in argv and argv.index(flag) + 1 < len(argv):
                inline = argv[argv.index(flag) + 1]
        if inline is None and (not argv or argv[0] == "-") and stdin is not None:
            inline = "".join(part for part in stdin if isinstance(part, str))
        if inline is None:
            if name in _INTERPRETERS and argv[:1] in (["--version"], ["-V"], ["-v"]):
                return
            self.analysis.raise_to("opaque")
            return
        if name in _SHELLS:
            nested = analyse_shell(inline, self.cwd, self.context, self.nesting + 1)
            self.analysis.ops.extend(nested.ops)
            self.analysis.raise_to(nested.effects)
            return
        if _WRITE_HINT.search(inline):
            self.analysis.raise_to("tracked")
            self.analysis.ops.append(LoseMentioned(inline, "inline_script_write"))


TRUNCATED = re.compile(r"tokens truncated|\[\.\.\. ?\d+ (?:more )?(?:lines|bytes)|output truncated", re.IGNORECASE)


# A login shell's start-up files may complain before the command runs (macOS sandboxes:
# "/opt/homebrew/.../shellenv.sh: line 18: /bin/ps: Operation not permitted").
_STARTUP_NOISE = re.compile(r"\A(?:/[^\n:]*(?:\.sh|rc|profile): line \d+: [^\n]*\n)+")


def strip_startup_noise(output: str) -> str:
    return _STARTUP_NOISE.sub("", output, count=1)


_SED_RANGE = re.compile(r"(\d+)(?:,(\d+))?p")
_NUMBERED = re.compile(r"^ *(\d+)(?:\t|: )(.*)$")


def shell_read(command: str, output: str) -> tuple[str, ReadChunk] | None:
    """The path and the lines a successful read printed, or None when the command is not
    a read whose output is a known slice of one file: ``cat f``, ``sed -n 'A,Bp' f``,
    ``head -n N f``, ``tail -n +K f``, and ``nl -ba f`` / ``cat -n f`` (alone or piped
    into ``sed -n 'A,Bp'``). A read that printed fewer lines than it asked for reached
    the end of the file, which makes the file's length known."""
    commands = parse_shell(command).commands
    if not commands or len(commands) > 2 or TRUNCATED.search(output):
        return None
    if any(c.redirects or not all(w.literal for w in c.words) for c in commands):
        return None
    output = strip_startup_noise(output)
    reader = commands[0].argv
    if len(commands) == 2:
        window = _sed_window(commands[1].argv) if commands[1].connector == "|" else None
        path = _numbered_listing(reader)
        return None if window is None or path is None else _numbered_chunk(path, output, window)
    if (path := _numbered_listing(reader)) is not None:
        return _numbered_chunk(path, output, (1, None))
    if len(reader) == 2 and reader[0] == "cat" and not reader[1].startswith("-"):
        lines = output.split("\n")
        return reader[1], ReadChunk(1, lines, len(lines))
    if reader[:1] == ["sed"] and len(reader) == 4 and (window := _sed_window(reader[:3])) is not None:
        chunk = _slice(output, *window)
        return None if chunk is None else (reader[3], chunk)
    if reader[:1] == ["head"] and (count := _head_count(reader[1:-1])) is not None and not reader[-1].startswith("-"):
        chunk = _slice(output, 1, count)
        return None if chunk is None else (reader[-1], chunk)
    if reader[:1] == ["tail"] and len(reader) == 4 and reader[1] == "-n" and reader[2].startswith("+"):
        first = reader[2][1:]
        if first.isdigit() and int(first) > 0:
            lines = output.split("\n")
            return reader[3], ReadChunk(int(first), lines, int(first) - 1 + len(lines))
    return None


def _sed_window(argv: list[str]) -> tuple[int, int] | None:
    """``sed -n 'A,Bp'`` (or ``'Ap'``): the first and last line it prints."""
    if len(argv) != 3 or argv[:2] != ["sed", "-n"] or not (match := _SED_RANGE.fullmatch(argv[2])):
        return None
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else first
    return (first, last) if 0 < first <= last else None


def _head_count(flags: list[str]) -> int | None:
    if len(flags) == 2 and flags[0] == "-n" and flags[1].isdigit():
        return int(flags[1])
    if len(flags) == 1 and flags[0][:1] == "-" and flags[0][1:].isdigit():
        return int(flags[0][1:])
    return None


def _slice(output: str, first: int, last: int) -> ReadChunk | None:
    """Lines ``first..last`` as printed: all of them end with a newline, or fewer were
    printed because the file ended (its last line without a newline when it had none)."""
    lines = output.split("\n")
    wanted = last - first + 1
    if not output:
        return None
    if len(lines) == wanted + 1 and lines[-1] == "":
        return ReadChunk(first, lines[:-1], None)
    if len(lines) <= wanted:
        return ReadChunk(first, lines, first - 1 + len(lines))
    return None


def _numbered_listing(argv: list[str]) -> str | None:
    """The file of ``nl -ba [-w N] [-s SEP] [-v 1] f`` or ``cat -n f`` (every line numbered)."""
    if argv[:2] == ["cat", "-n"] and len(argv) == 3:
        return argv[2]
    if argv[:1] != ["nl"] or len(argv) < 3 or "-ba" not in argv:
        return None
    flags = argv[1:-1]
    index = 0
    while index < len(flags):
        flag = flags[index]
        if flag == "-ba" or re.fullmatch(r"-w\d+", flag) or flag in ("-v1", "-s\t", "-s: "):
            index += 1
        elif flag in ("-w", "-s", "-v") and index + 1 < len(flags):
            if flag == "-v" and flags[index + 1] != "1":
                return None
            if flag == "-s" and flags[index + 1] not in ("\t", ": "):
                return None
            index += 2
        else:
            return None
    return argv[-1]


def _numbered_chunk(path: str, output: str, window: tuple[int, int | None]) -> tuple[str, ReadChunk] | None:
    """Numbered lines (``nl``/``cat -n`` print each with a newline, so whether the file
    ends with one is not known: the piece never fixes the file's length)."""
    if not output.endswith("\n"):
        return None
    lines: list[str] = []
    first, last = window
    for number, raw in enumerate(output[:-1].split("\n"), start=first):
        match = _NUMBERED.match(raw)
        if match is None or int(match.group(1)) != number or (last is not None and number > last):
            return None
        lines.append(match.group(2))
    return path, ReadChunk(first, lines, None)


def _npm_script_name(client: str, argv: list[str]) -> str | None:
    operands = [a for a in argv if not a.startswith("-")]
    if not operands:
        return None
    if operands[0] in ("test", "t", "tst"):
        return "test"
    if operands[0] in ("run", "run-script"):
        return operands[1] if len(operands) > 1 else None
    if client != "npm" and operands[0] not in ("install", "add", "remove", "exec", "dlx", "x", "i"):
        return operands[0]
    return None


def analyse_shell(command: str, cwd: str | None, context: ShellContext, depth: int = 0) -> ShellAnalysis:
    """File operations of ``command`` run in absolute directory ``cwd`` (None = unknown)."""
    parsed = parse_shell(command)
    reader = _CommandReader(cwd, context, depth)
    for simple in parsed.commands:
        reader.run(simple)
    if not parsed.complete:
        reader.analysis.raise_to("opaque")
    return reader.analysis

"""``instruction.md`` for a repair task: the failing check and what it printed, in the user's voice.

The excerpt comes from the failing run's recorded output (the state before the fix),
so it never shows the fix itself. When the task's tests are the session's final ones, it
comes instead from the check run in the image on the code before the fix with those tests
(calibration): the recorded run saw tests the agent never gets. Long outputs keep their head (the command's own
summary line is often first) and their tail (the failure summary), with a marker
where lines were cut.
"""

from __future__ import annotations

import re

from traj2env_assets.checks.results import SANDBOX_WRAPPER
from traj2env_assets.families.repair.candidates import RepairCandidate, lint_tool

EXCERPT_HEAD_LINES = 15
EXCERPT_TAIL_LINES = 45
MAX_LINE_CHARS = 300


# What the agent's shell tool wrapped around the command's own output: Claude Code's
# "Exit code N" first line, Codex's "Chunk ID / Wall time / Process exited / Output:"
# header, pi's "Command exited with code N" last line.
_TOOL_HEADER = re.compile(
    r"\A(?:Exit code:? -?\d+\n)?"
    r"(?:(?:Chunk ID|Wall time|Process exited with code|Original token count|Process running with session ID)[^\n]*\n)*"
    r"(?:Output:\n)?"
)
_TOOL_FOOTER = re.compile(r"\n*Command exited with code -?\d+\s*\Z")
_SANDBOX_STDERR = re.compile(r"\n?, stderr: (.*)\Z", re.DOTALL)


def check_output_text(output: str) -> str:
    """The check's own output, without the wrapper the agent's shell tool added."""
    text = _TOOL_FOOTER.sub("", _TOOL_HEADER.sub("", output, count=1))
    if wrapper := SANDBOX_WRAPPER.match(text):
        # Codex put its sandbox's words around a run that exited non-zero: keep the run's.
        text = _SANDBOX_STDERR.sub(
            lambda match: f"\n{match.group(1)}" if match.group(1).strip() else "", text[wrapper.end() :]
        ).lstrip("\n")
    return text


def failure_excerpt(output: str) -> str:
    output = check_output_text(output)
    lines = [
        line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " …" for line in output.rstrip().splitlines()
    ]
    if len(lines) <= EXCERPT_HEAD_LINES + EXCERPT_TAIL_LINES:
        return "\n".join(lines)
    cut = len(lines) - EXCERPT_HEAD_LINES - EXCERPT_TAIL_LINES
    return "\n".join([*lines[:EXCERPT_HEAD_LINES], f"[… {cut} lines cut …]", *lines[-EXCERPT_TAIL_LINES:]])


def repair_instruction(
    candidate: RepairCandidate,
    excerpt: str | None = None,
    failing_ids: list[str] | None = None,
    ungraded_ids: list[str] | None = None,
) -> str:
    """The recorded failure, or the ``excerpt`` (``failure_excerpt``) and ``failing_ids`` of
    another run of the check; ``ungraded_ids``: tests this environment fails whatever the fix."""
    output = failure_excerpt(candidate.failure_output) if excerpt is None else excerpt
    ids = candidate.failing_ids if failing_ids is None else failing_ids
    where = f"`/workspace/{candidate.cwd}`" if candidate.cwd else "`/workspace`"
    fence = "````" if "```" in output else "```"
    tool = lint_tool(candidate)
    lint = tool is not None
    failing = ""
    if ids:
        shown = ids[:10]
        more = f"\n- … and {len(ids) - len(shown)} more" if len(ids) > len(shown) else ""
        heading = "These are reported" if lint else "These fail"
        failing = f"{heading}:\n\n" + "\n".join(f"- `{test_id}`" for test_id in shown) + more + "\n\n"
    if tool == "esbuild":
        rules = (
            "Please fix the code so that this build passes. Don't work around it: no changes to the build's "
            "configuration (package.json, tsconfig.json, jsconfig.json), and don't delete the files, the "
            "imports or the functions and classes it reports on: the build is run exactly as recorded, with "
            "the original configuration.\n"
        )
    elif tool in ("tsc", "eslint", "biome"):
        rules = (
            "Please fix the code so that this check passes. Don't silence it: no suppression comments "
            "(`// @ts-ignore`, `// @ts-nocheck`, `// @ts-expect-error`, `eslint-disable`, `biome-ignore`, "
            "inline `/* eslint ... */` or `/* global ... */`), no new `.d.ts` stubs, no changes to the tool's "
            "configuration (tsconfig.json, .eslintrc*, biome.json, package.json), and don't delete the files or the "
            "functions and classes it reports on: the check is run exactly as recorded, with the original "
            "configuration.\n"
        )
    elif lint:
        # A lint or type check has no assertions to guard: the verifier only checks that
        # the check passes, so the instruction rules out the ways to silence it.
        rules = (
            "Please fix the code so that this check passes. Don't silence it: no suppression comments "
            "(`# noqa`, `# type: ignore`, `# ruff: noqa`, `# mypy: ...`), no new `.pyi` stubs, no changes "
            "to the tool's configuration (pyproject.toml, setup.cfg, ruff.toml, mypy.ini), and don't delete "
            "the files or the functions and classes it reports on: the check is run exactly as recorded, "
            "with the original configuration.\n"
        )
    else:
        apart = ", apart from the ungraded tests above" if ungraded_ids else ""
        rules = (
            f"Please fix the code so that this check passes{apart}. Don't change the tests or the test and "
            "tool configuration (pytest/unittest settings, package.json scripts, tsconfig, linter "
            "config): the check is run exactly as recorded, with the original tests and configuration.\n"
        )
    ungraded = ""
    if ungraded_ids:
        ungraded = (
            "These tests also fail in this environment for reasons outside this task; they are not "
            "graded, leave them be:\n\n" + "\n".join(f"- `{test_id}`" for test_id in ungraded_ids) + "\n\n"
        )
    return (
        f"When I run `{candidate.check.command.strip()}` in {where}, it fails. This is what it printed:\n\n"
        f"{fence}\n{output}\n{fence}\n\n"
        f"{failing}"
        f"{ungraded}"
        f"{rules}"
    )

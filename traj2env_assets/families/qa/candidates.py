"""Mine qa candidates: one tool output showing values computed from Hugging Face dataset files.

A shell command is a candidate when it succeeded, printed something, and it or a
script it runs (a project file named in the command, as the replay knew it just before
the run) reads hub dataset files: ``hf://datasets/...`` paths, ``datasets.load_dataset``,
``huggingface_hub`` downloads (``hf_hub_download``, ``snapshot_download``) or a
``huggingface.co/datasets/`` URL. The dataset commit current at the trajectory's date is
what the task's inputs are pinned to, so a candidate needs a dated timestamp with a
timezone: the command's own, else the latest one recorded before it.

Skip reasons of this stage (exact strings):
- ``missing_trajectory_date``: no timestamp at or before the command;
- ``missing_trajectory_timezone``: the timestamp has no UTC offset.

Task id: the first 12 hex digits of a sha256 over the command, its output and its time,
so the same fact found in two copies of one session is one task (a ``duplicate``).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from traj2env_assets.families.contract import Drop, MinedCandidate
from traj2env_assets.replay import ReplayRecord, ShellCommand, UserRequest

HUB_DATASET_ACCESS = re.compile(
    r"hf://datasets/|load_dataset\s*\(|hf_hub_download\s*\(|snapshot_download\s*\(|huggingface\.co/datasets/"
)
HUB_DATASET_PATH = re.compile(
    r"(?:hf://datasets/|huggingface\.co/datasets/)([\w.-]+/[\w.-]+)(?:@[\w.-]+)?/?([^\s'\"`)\]]*)"
)
# The rendered trajectory the model reads: the session up to the candidate, newest kept.
CONTEXT_CHARS = 60_000
OUTPUT_CHARS = 6_000
SCRIPT_CHARS = 20_000
TASK_ID_CHARS = 12


class QaCandidate(BaseModel):
    """One tool output and what the proposal and the task are made from."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    partition_key: str
    command_index: int
    command: str
    output: str
    scripts: dict[str, str]
    """Project files the command names that read hub data, as they were before it ran."""
    hub_references: list[str]
    """``owner/name`` or ``owner/name/path`` spotted in the command and its scripts."""
    timestamp: str | None
    context: str
    """The rendered trajectory up to and including the command (for the model)."""


def dated(timestamp: str | None) -> datetime | None:
    """The timestamp as a datetime (aware when it carries an offset), or None."""
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def _named(path: str, command: ShellCommand) -> bool:
    relative = path.removeprefix(f"{command.cwd}/") if command.cwd else path
    return re.search(rf"(?<![\w./-]){re.escape(relative)}(?![\w./-])", command.command) is not None


def _scripts(command: ShellCommand, files: dict[str, str]) -> dict[str, str]:
    return {
        path: text[:SCRIPT_CHARS]
        for path, text in sorted(files.items())
        if _named(path, command) and HUB_DATASET_ACCESS.search(text)
    }


def _hub_references(texts: list[str]) -> list[str]:
    found: list[str] = []
    for text in texts:
        for match in HUB_DATASET_PATH.finditer(text):
            reference = "/".join(part for part in match.groups() if part)
            if reference not in found:
                found.append(reference)
    return found


def _render(record: ReplayRecord, upto: ShellCommand) -> str:
    """User requests and shell commands with their outputs, up to the candidate."""
    parts: list[str] = []
    for event in record.timeline:
        if isinstance(event, UserRequest):
            parts.append(f"## User request ({event.timestamp or 'undated'})\n{event.text.strip()}\n")
        elif isinstance(event, ShellCommand):
            output = event.output if len(event.output) <= OUTPUT_CHARS else event.output[-OUTPUT_CHARS:]
            marker = " (THE CANDIDATE OUTPUT)" if event.command_index == upto.command_index else ""
            parts.append(
                f"## Shell command #{event.command_index}{marker} ({event.timestamp or 'undated'}, "
                f"exit {event.exit_code})\n$ {event.command.strip()}\n{output.rstrip()}\n"
            )
            if event.command_index == upto.command_index:
                break
    text = "\n".join(parts)
    return text if len(text) <= CONTEXT_CHARS else "[earlier steps omitted]\n" + text[-CONTEXT_CHARS:]


def _moment(record: ReplayRecord, command: ShellCommand) -> str | None:
    latest = None
    for event in record.timeline:
        if isinstance(event, ShellCommand | UserRequest) and event.timestamp:
            latest = event.timestamp
        if isinstance(event, ShellCommand) and event.command_index == command.command_index:
            return command.timestamp or latest
    return command.timestamp or latest


def _drop_for_date(timestamp: str | None) -> Drop | None:
    moment = dated(timestamp)
    if moment is None:
        detail = f"unreadable timestamp {timestamp!r}" if timestamp else "no timestamp at or before the command"
        return Drop(reason="missing_trajectory_date", detail=detail)
    if moment.tzinfo is None:
        return Drop(reason="missing_trajectory_timezone", detail=f"{timestamp} has no UTC offset")
    return None


def mine_qa_candidates(record: ReplayRecord, partition_key: str) -> list[MinedCandidate[QaCandidate]]:
    mined = []
    for command in record.shell_commands():
        if command.exit_code not in (0, None) or command.is_error or not command.output.strip():
            continue
        scripts = _scripts(command, record.files_before(command.command_index))
        if not (HUB_DATASET_ACCESS.search(command.command) or scripts):
            continue
        timestamp = _moment(record, command)
        digest = hashlib.sha256(f"{command.command}\0{command.output}\0{timestamp}".encode()).hexdigest()
        candidate = QaCandidate(
            task_id=digest[:TASK_ID_CHARS],
            partition_key=partition_key,
            command_index=command.command_index,
            command=command.command,
            output=command.output,
            scripts=scripts,
            hub_references=_hub_references([command.command, *scripts.values()]),
            timestamp=timestamp,
            context=_render(record, command),
        )
        mined.append(
            MinedCandidate[QaCandidate](
                task_id=candidate.task_id,
                candidate=candidate,
                drop=_drop_for_date(timestamp),
                facts={
                    "command": command.command[:300],
                    "timestamp": timestamp or "",
                    "hub_references": candidate.hub_references,
                },
            )
        )
    return mined

"""The task card: a short Markdown page a reviewer reads before accepting a task.

Written as the task's ``README.md`` (Harbor's own place for a task's readme: ``TaskPaths.
readme_path``, packaged by ``harbor publish``) into the copy being published, so the
publish-time secret scan covers it too. The agent never sees it: only ``environment/``
becomes its image, and the Trajectory export leaves it out with the solution.
``traj2env rollout`` later adds (and on each rerun replaces) a ``## Rollouts`` section.
"""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.harbor.dataset import TaskRollouts, read_task_toml
from traj2env_assets.layout import TaskLayout
from traj2env_assets.lifecycle.status import CandidateStatus
from traj2env_assets.quality.effort import SessionEffort
from traj2env_assets.repositories.models import RepositoryMetadata

ROLLOUTS_HEADING = "## Rollouts"
FLAG_NOTES = {
    "never_solved": "no model solved it in any attempt: too hard, or broken for a real agent",
    "always_solved": "every model solved it in every attempt: too easy to tell models apart",
}
EXCERPT_CHARS = 600
TIMING_SUFFIX = "_seconds"
LICENCE_NOTE = (
    "Derived from a recorded agent session. The session, and the project files it shows, keep "
    "their authors' licence: check it before redistributing this task."
)


def _excerpt(instruction: str) -> str:
    """The instruction, cut at :data:`EXCERPT_CHARS`; a code block the cut leaves open is
    closed, so the rest of the card is not read as code."""
    if len(instruction) <= EXCERPT_CHARS:
        return instruction
    cut = instruction[:EXCERPT_CHARS].rstrip() + " …"
    fences = sum(1 for line in cut.splitlines() if line.lstrip().startswith("```"))
    return cut + "\n```" if fences % 2 else cut


def render_card(task_dir: Path, status: CandidateStatus) -> str:
    """The card of the staged task in ``task_dir`` whose trials ``status`` records."""
    metadata = read_task_toml(task_dir).metadata
    instruction = TaskLayout(task_dir).instruction_path.read_text(encoding="utf-8").strip()
    excerpt = _excerpt(instruction)
    lines = [
        f"# {status.task_id}",
        "",
        (
            f"**{status.family}** · difficulty **{metadata.difficulty}** · "
            f"reward `{status.reward_kind}` · label **{metadata.repo2env.evaluation.label}**"
        ),
        "",
        "## The request",
        "",
        *(f"> {line}" if line else ">" for line in excerpt.splitlines()),
        "",
        "## What changed",
        "",
        *_changes(task_dir, metadata.session_effort),
        "",
        "## Calibration",
        "",
        *_figures(status.calibration.facts if status.calibration else {}),
        "",
        "## Trial matrix",
        "",
        *_matrix(status),
        "",
        "## Provenance",
        "",
        f"- session: `{metadata.source_trace}`",
        f"- project: {metadata.project or 'not recorded'}",
        f"- model: {metadata.source_model or 'not recorded'}",
        *_repository(metadata.repository),
        f"- licence: {LICENCE_NOTE}",
    ]
    return "\n".join(lines) + "\n"


def _changes(task_dir: Path, effort: SessionEffort | None) -> list[str]:
    solution = TaskLayout(task_dir).solution_files_dir
    files = sorted(path.relative_to(solution).as_posix() for path in solution.rglob("*") if path.is_file())
    lines = [f"- reference files: {', '.join(f'`{name}`' for name in files[:12])}" + (" …" if len(files) > 12 else "")]
    if effort:
        wall = effort.wall_seconds
        lines += [
            f"- {effort.files_changed} files, {effort.lines_changed} lines changed",
            f"- the session took {effort.agent_steps} agent steps, {effort.commands} commands "
            f"({effort.failed_commands} failed), {effort.edits} edits"
            + (f", {wall / 60:.1f} minutes" if wall is not None else ""),
        ]
    return lines


def _figures(facts: dict) -> list[str]:
    # A timing (``calibration_seconds``) measures the run, not the task: on the card, two
    # runs of the same work would publish different bytes. The report keeps it.
    shown = {name: value for name, value in facts.items() if not name.endswith(TIMING_SUFFIX)}
    if not shown:
        return ["- no figures recorded"]
    return [f"- {name}: {_short(value)}" for name, value in sorted(shown.items())]


def _matrix(status: CandidateStatus) -> list[str]:
    if status.trials is None or not status.trials.rewards:
        return ["- not run"]
    rows = ["| control | reward |", "|---|---|"]
    rows += [f"| `{control}` | {reward} |" for control, reward in sorted(status.trials.rewards.items())]
    return rows


def _repository(repository: RepositoryMetadata | None) -> list[str]:
    if repository is None:
        return []
    return [f"- repository: `{repository.path}` at `{(repository.commit or '')[:12]}`"]


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= 120 else text[:120] + " …"


def with_rollouts(card: str, rollouts: TaskRollouts) -> str:
    """``card`` with its rollouts section (``traj2env rollout``) replaced, or added at the end."""
    section = [ROLLOUTS_HEADING, "", *_rollout_lines(rollouts)]
    lines = card.rstrip("\n").splitlines()
    if ROLLOUTS_HEADING in lines:
        start = lines.index(ROLLOUTS_HEADING)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        kept = lines[:start] + section + (["", *lines[end:]] if end < len(lines) else [])
    else:
        kept = [*lines, "", *section]
    return "\n".join(kept) + "\n"


def _rollout_lines(rollouts: TaskRollouts) -> list[str]:
    rows = ["| agent | model | attempts | solved | solve rate | last run |", "|---|---|---|---|---|---|"]
    for model in rollouts.models:
        rate = f"{model.solve_rate:.2f}" if model.solve_rate is not None else "-"
        rows.append(
            f"| {model.agent} | `{model.model}` | {model.attempts} | {model.solved} | {rate} | {model.runs[-1].at} |"
        )
    flag = f"- flag: **{rollouts.flag}** ({FLAG_NOTES[rollouts.flag]})" if rollouts.flag else "- flag: none"
    return [*rows, "", flag]

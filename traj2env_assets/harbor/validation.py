"""Check an emitted task with Harbor's own models and lint rules (harbor is a dev extra)."""

from __future__ import annotations

from pathlib import Path

from harbor.lint.models import DEFAULT_RULES
from harbor.lint.task import lint_task
from harbor.models.task.config import TaskConfig
from harbor.models.task.task import Task

from traj2env_assets.layout import TaskLayout


def harbor_problems(task_dir: Path) -> list[str]:
    """Empty when Harbor accepts the directory: valid layout, valid config, lint-clean."""
    problems = []
    if not Task.is_valid_dir(task_dir):
        problems.append(f"{task_dir}: Harbor does not recognise a valid task directory")
    TaskConfig.model_validate_toml(TaskLayout(task_dir).config_path.read_text(encoding="utf-8"))
    for finding in lint_task(task_dir, selected_rules=set(DEFAULT_RULES)):
        problems.append(f"{finding.path}: [{finding.rule}] {finding.message}")
    return problems

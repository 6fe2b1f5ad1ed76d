"""The attack catalogue itself, without Docker: what it covers, and that every submission
builds against the sample projects, is valid Python/JavaScript and leaves the bug in place."""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from traj2env_assets_tests.attacks.catalogue import ATTACKS, ONE_PER_CLASS
from traj2env_assets_tests.attacks.model import SAMPLE_PROJECTS, Attack, AttackClass, Runner, SampleProject
from traj2env_assets_tests.example_run import EXAMPLES

# The buggy line each fix changes: it must survive every attack that rewrites the module.
BUG = {
    Runner.PYTEST: "if merged and start < merged[-1][1]:",
    Runner.UNITTEST: 'return re.sub(r"[^a-z0-9]", "-", ascii_title.lower())',
    Runner.NODE: "counts.set(word, (counts.get(word) ?? 0) + 1);",
}
ISSUE_9_CLASSES = {
    AttackClass.TEST_EDIT,
    AttackClass.REPORT_FORGERY,
    AttackClass.ASSERTION_PATCH,
    AttackClass.RESULTS_CHANNEL,
    AttackClass.STDLIB_SHADOW,
    AttackClass.SYMLINK_ESCAPE,
    AttackClass.OPERATOR_OVERLOAD,
    AttackClass.VERIFIER_TAMPER,
    AttackClass.REWARD_FILE,
    AttackClass.HOST_MOUNT,
}
PAIRS = [(attack, runner) for attack in ATTACKS for runner in attack.runners]


def _buggy_project(runner: Runner) -> SampleProject:
    project = SAMPLE_PROJECTS[runner]
    return project.with_workspace(EXAMPLES / "projects" / project.name / "buggy")


def test_the_catalogue_covers_every_class_of_issue_9_on_every_runner() -> None:
    assert len(ATTACKS) >= 30
    by_class: dict[AttackClass, list[Attack]] = defaultdict(list)
    for attack in ATTACKS:
        by_class[attack.attack_class].append(attack)
    assert set(by_class) >= ISSUE_9_CLASSES
    assert all(len(attacks) >= 2 for attacks in by_class.values()), {c: len(a) for c, a in by_class.items()}
    for runner in Runner:
        assert len([a for a in ATTACKS if runner in a.runners]) >= 20, runner
        classes = {a.attack_class for a in ATTACKS if runner in a.runners}
        assert len(classes & ISSUE_9_CLASSES) >= 7, (runner, classes)


def test_the_ci_subset_has_every_class_on_every_runner_it_targets() -> None:
    for runner, names in ONE_PER_CLASS.items():
        attacks = [a for a in ATTACKS if a.name in names]
        assert len(attacks) == len(names) and all(runner in a.runners for a in attacks)
    every = {(a.attack_class, r) for r, names in ONE_PER_CLASS.items() for a in ATTACKS if a.name in names}
    assert {a.attack_class for a in ATTACKS} == {attack_class for attack_class, _ in every}


@pytest.mark.parametrize(("attack", "runner"), PAIRS, ids=[f"{a.name}[{r}]" for a, r in PAIRS])
def test_every_submission_builds_is_valid_code_and_keeps_the_bug(
    attack: Attack, runner: Runner, tmp_path: Path
) -> None:
    project = _buggy_project(runner)
    action = attack.payloads[runner](project)
    assert action.files or action.script.strip() not in ("", "true")
    module = f"/workspace/{project.module}"
    if module in action.files:
        assert BUG[runner] in action.files[module].decode()
    for path, content in action.files.items():
        if path.endswith(".py"):
            compile(content, path, "exec")
        elif path.endswith(".js"):
            copy = tmp_path / Path(path).name
            copy.write_bytes(content)
            checked = subprocess.run([_node(), "--check", str(copy)], capture_output=True, text=True)
            assert checked.returncode == 0, f"{path}: {checked.stderr}"
    bash = subprocess.run(["bash", "-n", "-c", action.script], capture_output=True, text=True)
    assert bash.returncode == 0, bash.stderr


def _node() -> str:
    node = shutil.which("node")
    assert node, "the catalogue test needs Node to check the JavaScript submissions"
    return node

"""Near-duplicate tasks form groups; a group stays on one side of the split; caps hold.

The tasks are written here: one small project, fixes of its functions, each task with its
instruction, reference change and tracked tests, the way the Harbor writer lays them out.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from datasketch import MinHash

from traj2env_assets.harbor.dataset import read_manifest, write_dataset
from traj2env_assets.harbor.task_toml import (
    AgentSection,
    EnvironmentSection,
    PackageSection,
    TaskMetadata,
    TaskToml,
    VerifierSection,
)
from traj2env_assets.layout import TaskLayout, Workspace
from traj2env_assets.lifecycle.status import CandidateStatus, save_status, staged_task_dir
from traj2env_assets.quality.near_duplicates import near_duplicate_groups, task_signature
from traj2env_assets.stages.publish import published_signatures
from traj2env_assets.stages.publish.publishing import DatasetCaps, publish

FUNCTIONS = [f"def f{n}(x):\n    return x + {n}\n" for n in range(12)]


def _write_task(
    task_dir: Path,
    *,
    source: str,
    fixed: int,
    request: str,
    tests: list[str],
    project: str = "calc",
    spelling: str = "",
) -> Path:
    """A task whose reference fixes function ``fixed`` (the base returns its number negated)."""
    base = "\n\n".join(f.replace(f"+ {n}", f"- {n}") if n == fixed else f for n, f in enumerate(FUNCTIONS))
    layout = TaskLayout(task_dir)
    task_dir.mkdir(parents=True)
    layout.instruction_path.write_text(request + "\n")
    layout.shown_workspace_dir.mkdir(parents=True)
    (layout.shown_workspace_dir / "calc.py").write_text(base)
    fix = "\n\n".join(FUNCTIONS).replace(f"return x + {fixed}\n", f"return x + {fixed}{spelling}\n")
    layout.solution_files_dir.mkdir(parents=True)
    (layout.solution_files_dir / "calc.py").write_text(fix)
    layout.harness_dir.mkdir(parents=True)
    layout.tracked_ids_path.write_text("".join(f"{test}\n" for test in tests))
    toml = TaskToml(
        artifacts=["/workspace"],
        task=PackageSection(name=f"local/{task_dir.name}"),
        metadata=TaskMetadata(family="repair", source_trace=source, project=project),
        agent=AgentSection(timeout_sec=60),
        verifier=VerifierSection(timeout_sec=60),
        environment=EnvironmentSection(build_timeout_sec=60),
    )
    (task_dir / "task.toml").write_text(toml.to_toml())
    return task_dir


def _request(n: int) -> str:
    return f"f{n} subtracts {n} where it should add it: make tests/test_calc.py::test_f{n} pass."


def test_two_fixes_of_one_bug_are_one_group_and_a_fix_elsewhere_in_the_file_is_not(tmp_path: Path) -> None:
    first = _write_task(
        tmp_path / "a", source="s1", fixed=3, request=_request(3), tests=["tests/test_calc.py::test_f3"]
    )
    again = _write_task(
        tmp_path / "b",
        source="s2",
        fixed=3,
        request=_request(3) + " Keep it short.",
        tests=["tests/test_calc.py::test_f3"],
        spelling="  # fixed",
    )
    other = _write_task(
        tmp_path / "c", source="s3", fixed=9, request=_request(9), tests=["tests/test_calc.py::test_f9"]
    )
    elsewhere = _write_task(
        tmp_path / "d",
        source="s4",
        fixed=3,
        request=_request(3),
        tests=["tests/test_calc.py::test_f3"],
        project="another-project",
    )

    groups = near_duplicate_groups(
        {
            path.name: (project, task_signature(path))
            for path, project in ((first, "calc"), (again, "calc"), (other, "calc"), (elsewhere, "another-project"))
        }
    )

    assert groups == {"a": "a", "b": "a", "c": "c", "d": "d"}


def test_a_near_duplicate_group_is_never_split_between_train_and_test(tmp_path: Path) -> None:
    dataset = tmp_path / "dataset"
    for n in range(10):  # ten fixes, each recorded by two sessions in two ways
        tests = [f"tests/test_calc.py::test_f{n}"]
        _write_task(dataset / f"t{n}-a", source=f"s{n}-a", fixed=n, request=_request(n), tests=tests)
        _write_task(
            dataset / f"t{n}-b",
            source=f"s{n}-b",
            fixed=n,
            request=_request(n) + " Please.",
            tests=tests,
            spelling="  # ok",
        )

    manifest = write_dataset(dataset)

    by_group: dict[str, set[str]] = {}
    for task in manifest.tasks:
        by_group.setdefault(task.group or "", set()).add(task.split)
    assert len(by_group) == 10 and all(len(splits) == 1 for splits in by_group.values())
    assert manifest.split_of("test") and manifest.groups_across_splits == []
    assert {task.project for task in manifest.tasks} == {"calc"}


def test_a_new_near_duplicate_joins_the_split_of_its_published_partner(tmp_path: Path) -> None:
    dataset = tmp_path / "dataset"
    for n in range(8):
        _write_task(dataset / f"t{n}", source=f"s{n}", fixed=n, request=_request(n), tests=[f"tests/t.py::test_f{n}"])
    first = {task.task_id: task.split for task in write_dataset(dataset).tasks}
    assert set(first.values()) == {"train", "test"}

    for n in range(8):
        _write_task(
            dataset / f"t{n}-again",
            source=f"s{n}-again",
            fixed=n,
            request=_request(n) + " Thanks.",
            tests=[f"tests/t.py::test_f{n}"],
            spelling="  # again",
        )
    manifest = write_dataset(dataset)

    splits = {task.task_id: task.split for task in manifest.tasks}
    assert all(splits[f"t{n}-again"] == first[f"t{n}"] for n in range(8))
    assert read_manifest(dataset).groups_across_splits == []


def _ready(workspace: Workspace, tmp_path: Path, name: str, **task: object) -> CandidateStatus:
    status = CandidateStatus(
        family="repair", partition_key=f"p-{name}", task_id=name, reward_kind="binary", reached="trials"
    )
    staged = staged_task_dir(workspace, status.ref)
    _write_task(staged, **task)  # type: ignore[arg-type]
    return save_status(workspace, status)


def test_caps_stop_a_group_and_a_project_at_their_size_and_say_which(tmp_path: Path) -> None:
    workspace = Workspace(root=tmp_path / "workspace")
    dataset = tmp_path / "dataset"
    copies = [
        _ready(
            workspace,
            tmp_path,
            f"fix3-{n}",
            source=f"s3-{n}",
            fixed=3,
            request=_request(3) + " x" * n,
            tests=["tests/t.py::test_f3"],
            spelling="  #" + "!" * n,
        )
        for n in range(3)
    ]
    others = [
        _ready(
            workspace,
            tmp_path,
            f"fix{n}",
            source=f"s{n}",
            fixed=n,
            request=_request(n),
            tests=[f"tests/t.py::test_f{n}"],
        )
        for n in (5, 7, 9)
    ]

    caps = DatasetCaps(per_group=2, per_project=4)
    outcomes = {s.task_id: s for s in publish(workspace, dataset, [*copies, *others], caps)}

    assert [outcomes[s.task_id].state for s in copies] == ["published", "published", "dropped"]
    capped = outcomes["fix3-2"].drop
    assert capped is not None and capped.reason == "group_cap" and "fix3-0" in capped.detail
    assert [outcomes[s.task_id].state for s in others] == ["published", "published", "dropped"]
    assert outcomes["fix9"].drop is not None and outcomes["fix9"].drop.reason == "project_cap"
    assert sorted(p.name for p in dataset.iterdir()) == ["fix3-0", "fix3-1", "fix5", "fix7"]


def test_a_published_task_is_signed_once_until_its_folder_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = Workspace(root=tmp_path / "workspace")
    dataset = tmp_path / "dataset"
    first = _ready(workspace, tmp_path, "fix3", source="s3", fixed=3, request=_request(3), tests=["t::test_f3"])
    publish(workspace, dataset, [first])
    signed: list[str] = []

    def counted(task_dir: Path) -> MinHash:
        signed.append(task_dir.name)
        return task_signature(task_dir)

    monkeypatch.setattr(published_signatures, "task_signature", counted)
    later = [
        _ready(workspace, tmp_path, f"fix{n}", source=f"s{n}", fixed=n, request=_request(n), tests=[f"t::test_f{n}"])
        for n in (5, 7)
    ]
    publish(workspace, dataset, later)
    # Each published task is signed once, as a peer of the first publish after its own.
    assert sorted(signed) == ["fix3", "fix5"]

    replaced = dataset / "fix3"
    shutil.rmtree(replaced)
    _write_task(replaced, source="s3", fixed=4, request=_request(4), tests=["t::test_f4"])
    signed.clear()
    fourth = _ready(workspace, tmp_path, "fix4", source="s4", fixed=4, request=_request(4), tests=["t::test_f4"])
    [outcome] = publish(workspace, dataset, [fourth], DatasetCaps(per_group=1))
    # The replaced folder is signed again (its new content is what the cap compares), fix7
    # for the first time, fix5 not again.
    assert sorted(signed) == ["fix3", "fix7"]
    assert outcome.drop is not None and outcome.drop.reason == "group_cap" and "fix3" in outcome.drop.detail

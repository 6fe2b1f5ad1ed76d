"""dataset.json and splits.json: source-disjoint, seeded, stable across reruns."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from traj2env_assets.harbor.dataset import (
    MANIFEST_FILE,
    SPLITS_FILE,
    Split,
    assign_splits,
    read_manifest,
    task_content_hash,
    write_dataset,
)
from traj2env_assets.harbor.writer import write_task
from traj2env_assets_tests.docker.sample_tasks import python_task


def _publish(destination: Path, task_id: str, source: str) -> None:
    # One project per source: these tasks are alike, and would otherwise be one
    # near-duplicate group that the split keeps whole.
    spec = python_task(task_id, marker=task_id).model_copy(update={"source_trace": source, "project": source})
    write_task(spec, destination)


def test_sources_split_disjointly_with_about_fifteen_percent_in_test() -> None:
    sources = [f"session-{n:03d}" for n in range(200)]
    splits = assign_splits(None, sources)
    test = [s for s, split in splits.sources.items() if split == "test"]
    assert len(test) == 30  # 15 % of 200
    assert assign_splits(None, list(reversed(sources))) == splits  # seeded: input order does not matter
    assert assign_splits(None, sources, seed=16) != splits


def test_reruns_keep_every_assignment_and_new_sources_fill_the_share() -> None:
    first = assign_splits(None, [f"s{n}" for n in range(20)])
    second = assign_splits(first, [f"s{n}" for n in range(40)])
    assert {s: second.sources[s] for s in first.sources} == first.sources
    assert sum(split == "test" for split in second.sources.values()) == 6  # round(0.15 * 40)


def test_manifest_lists_tasks_with_hashes_and_keeps_splits_on_rerun(tmp_path: Path) -> None:
    destination = tmp_path / "tasks"
    for n in range(7):
        _publish(destination, f"calc-{n}-a", f"session-{n}")
    _publish(destination, "calc-0-b", "session-0")  # a second task from one source
    (destination / "stray").mkdir()
    manifest = write_dataset(destination)
    by_id = {task.task_id: task for task in manifest.tasks}
    assert len(by_id) == 8 and by_id["calc-0-a"].family == "repair"
    assert by_id["calc-0-a"].split == by_id["calc-0-b"].split
    assert by_id["calc-3-a"].content_hash == task_content_hash(destination / "calc-3-a")
    assert by_id["calc-3-a"].content_hash != by_id["calc-4-a"].content_hash
    assert [s.path for s in manifest.skipped] == ["stray"]
    splits: tuple[Split, Split] = ("train", "test")
    for split in splits:
        other: Split = "test" if split == "train" else "train"
        sources = {t.source_trace for t in manifest.split_of(split)}
        assert sources.isdisjoint(t.source_trace for t in manifest.split_of(other))
    assert len(manifest.split_of("test")) >= 1
    assert read_manifest(destination) == manifest
    # A rerun with more sources moves no task; removing a task does not reshuffle the rest.
    shutil.rmtree(destination / "calc-1-a")
    for n in range(7, 20):
        _publish(destination, f"calc-{n}-a", f"session-{n}")
    rerun = write_dataset(destination)
    assert all(t.split == by_id[t.task_id].split for t in rerun.tasks if t.task_id in by_id)
    assert json.loads((destination / SPLITS_FILE).read_text())["sources"]["session-1"] == by_id["calc-1-a"].split
    assert (destination / MANIFEST_FILE).is_file()


def test_a_changed_seed_does_not_silently_move_tasks(tmp_path: Path) -> None:
    _publish(tmp_path, "calc-0", "session-0")
    write_dataset(tmp_path)
    with pytest.raises(ValueError, match="delete it to reassign"):
        write_dataset(tmp_path, seed=99)


def test_the_configs_dataset_name_names_the_manifest_and_the_trajectory_spec(tmp_path: Path) -> None:
    """``output.dataset_name`` and ``output.org`` reach dataset.json through the
    harbor_dataset asset, and upload.py offers the name as the benchmark's default."""
    import dagster as dg

    from traj2env_assets.config import RunConfigFile, RunSettings
    from traj2env_assets.defs.dataset import harbor_dataset
    from traj2env_assets.defs.resources import PipelineResource
    from traj2env_assets.trajectory_export.export import upload_script

    destination = tmp_path / "tasks"
    _publish(destination, "calc-0-a", "session-0")
    config = RunConfigFile.model_validate(
        {"output": {"destination": str(destination), "org": "acme", "dataset_name": "acme-fixes"}}
    )
    pipeline = PipelineResource.from_settings(RunSettings.resolve(config, tmp_path / "ws"))
    assert dg.materialize([harbor_dataset], resources={"pipeline": pipeline}).success
    manifest = read_manifest(destination)
    assert (manifest.name, manifest.org) == ("acme-fixes", "acme")
    assert [task.task_id for task in manifest.tasks] == ["calc-0-a"]
    script = upload_script(manifest.name)
    assert "default='acme-fixes'," in script
    compile(script, "upload.py", "exec")


def test_the_manifest_names_the_harbor_environment_that_runs_its_tasks(tmp_path: Path) -> None:
    from harbor.utils.import_path import import_class

    from traj2env_assets.harbor import validate
    from traj2env_assets.harbor.no_network_environment import NoNetworkDockerEnvironment

    destination = tmp_path / "tasks"
    _publish(destination, "calc-0", "session-0")
    write_dataset(destination)
    named = json.loads((destination / MANIFEST_FILE).read_text())["harbor_environment"]

    assert import_class(named) is NoNetworkDockerEnvironment
    # `traj2env validate` (and every harbor test through it) runs what the manifest names.
    assert named == validate.IMPORT_PATH

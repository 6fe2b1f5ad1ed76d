"""Write the Trajectory spec for a Harbor dataset: ``traj2env export --dataset D --out O``.

The spec directory (layout in :mod:`traj2env_assets.trajectory_export.layout`) holds one
shared harness image for every task: the platform's sandbox runs its own Docker engine
(``env_resources.docker_engine``), and the harness builds each task's image in it, as
the seed's cookbook does for Harbor-style tasks. Task directories go in one archive so
the build context stays far below the platform's 4,096-file limit whatever the task
count; ``solution/`` is left out (nothing in the attempt needs it). The tasks' FROM
images are saved into the context because the sandbox has no registry access.
"""

from __future__ import annotations

import gzip
import re
import shutil
import tarfile
from pathlib import Path

import docker
from pydantic import BaseModel

from traj2env_assets.atomic_files import atomic_directory, atomic_write_text
from traj2env_assets.families.registry import Families
from traj2env_assets.harbor.dataset import (
    MANIFEST_FILE,
    DatasetManifest,
    Split,
    read_manifest,
    read_task_toml,
    write_dataset,
)
from traj2env_assets.layout import CARD_FILE, TaskLayout
from traj2env_assets.trajectory_export.context import context_size
from traj2env_assets.trajectory_export.dockerfile import harness_dockerfile
from traj2env_assets.trajectory_export.layout import (
    BASE_IMAGES_DIR,
    BENCHMARK_DIR,
    DOCKERFILE,
    HARNESS_FILE,
    HARNESS_MODULES,
    PACKAGE_DIR,
    TASK_INDEX_FILE,
    TASKS_ARCHIVE,
    UPLOAD_SCRIPT,
    WHEELHOUSE_DIR,
)
from traj2env_assets.trajectory_export.task_index import HarnessTask, TaskIndex
from traj2env_assets.trajectory_export.wheelhouse import copy_wheelhouse, download_wheelhouse

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
# Reward scale per family reward kind: repair is 1/0, build/extend a fraction of tests.
REWARD_BOUNDS = {"binary": (0.0, 1.0), "fraction": (0.0, 1.0)}
# The card names the reference's files and the matrix: the harness's agent must not find it.
EXCLUDED_TASK_PARTS = {"solution", CARD_FILE}
_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", re.IGNORECASE | re.MULTILINE)


class ExportSummary(BaseModel):
    spec_dir: Path
    tasks: int
    train: int
    test: int
    context_files: int
    context_bytes: int
    base_images: list[str]


def export_spec(
    dataset: Path,
    out: Path,
    families: Families,
    *,
    wheelhouse: Path | None = None,
    docker_client: docker.DockerClient | None = None,
    manifest: DatasetManifest | None = None,
) -> ExportSummary:
    """Write ``<out>/benchmark/`` (replaced whole) and ``<out>/upload.py``; ``families`` are
    those the published tasks may name (each task's reward scale is its family's)."""
    if not dataset.is_dir():
        raise ValueError(f"{dataset} is not a directory of published tasks")
    if manifest is None:
        manifest = read_manifest(dataset) if (dataset / MANIFEST_FILE).is_file() else write_dataset(dataset)
    if not manifest.tasks:
        raise ValueError(f"{dataset} has no published tasks to export")
    index = TaskIndex(
        tasks={task.task_id: _harness_task(dataset, families, task.task_id, task.split) for task in manifest.tasks}
    )
    base_images = sorted({name for task in index.tasks.values() for name in task.base_images})
    index.base_image_archives = {name: _archive_name(name) for name in base_images}
    with atomic_directory(out / BENCHMARK_DIR) as context:
        (context / DOCKERFILE).write_text(harness_dockerfile(), encoding="utf-8")
        (context / TASK_INDEX_FILE).write_text(index.model_dump_json(indent=2) + "\n", encoding="utf-8")
        shutil.copyfile(PACKAGE_ROOT / "trajectory_export" / "harness.py", context / HARNESS_FILE)
        for module in HARNESS_MODULES:
            target = context / PACKAGE_DIR / module
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(PACKAGE_ROOT / module, target)
        _write_tasks_archive(dataset, [task.task_id for task in manifest.tasks], context / TASKS_ARCHIVE)
        if wheelhouse is not None:
            copy_wheelhouse(wheelhouse, context / WHEELHOUSE_DIR)
        else:
            download_wheelhouse(context / WHEELHOUSE_DIR)
        _save_base_images(docker_client or docker.from_env(), index.base_image_archives, context / BASE_IMAGES_DIR)
    atomic_write_text(out / UPLOAD_SCRIPT, upload_script(manifest.name))
    size = context_size(out / BENCHMARK_DIR)
    return ExportSummary(
        spec_dir=out,
        tasks=len(manifest.tasks),
        train=len(manifest.split_of("train")),
        test=len(manifest.split_of("test")),
        context_files=size.files,
        context_bytes=size.bytes,
        base_images=base_images,
    )


def _harness_task(dataset: Path, families: Families, task_id: str, split: Split) -> HarnessTask:
    task_dir = dataset / task_id
    toml = read_task_toml(task_dir)
    low, high = REWARD_BOUNDS[families.by_name(toml.metadata.family).reward_kind]
    dockerfile = TaskLayout(task_dir).dockerfile_path.read_text(encoding="utf-8")
    return HarnessTask(
        task_id=task_id,
        family=toml.metadata.family,
        source_trace=toml.metadata.source_trace,
        split=split,
        agent_timeout_sec=toml.agent.timeout_sec,
        verifier_timeout_sec=toml.verifier.timeout_sec,
        build_timeout_sec=toml.environment.build_timeout_sec,
        memory_mb=toml.environment.memory_mb,
        workdir=toml.environment.workdir,
        submission_path=toml.artifacts[0],
        base_images=sorted(set(_FROM.findall(dockerfile))),
        reward_min=low,
        reward_max=high,
    )


def _archive_name(image: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", image) + ".tar"


def _write_tasks_archive(dataset: Path, task_ids: list[str], target: Path) -> None:
    """A reproducible tar.gz of the task directories (sorted, fixed mtimes and owners)."""
    with (
        open(target, "wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w") as tar,
    ):
        for task_id in sorted(task_ids):
            _add_sorted(tar, dataset / task_id, task_id)


def _add_sorted(tar: tarfile.TarFile, path: Path, arcname: str) -> None:
    parts = Path(arcname).parts
    if len(parts) > 1 and parts[1] in EXCLUDED_TASK_PARTS:
        return
    tar.add(path, arcname=arcname, recursive=False, filter=_normalized)
    if path.is_dir() and not path.is_symlink():
        for child in sorted(path.iterdir()):
            _add_sorted(tar, child, f"{arcname}/{child.name}")


def _normalized(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    return info


def _save_base_images(client: docker.DockerClient, archives: dict[str, str], target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name, archive in archives.items():
        with open(target / archive, "wb") as handle:
            handle.writelines(client.images.get(name).save(named=True))


UPLOAD_TEMPLATE = '''"""Upload this spec to the Trajectory platform (needs traj2env installed and TRAJECTORY_API_KEY).

    python upload.py --agent-name YOUR_AGENT_NAME [--name BENCHMARK_NAME] [--public] [--no-build]

Diagnoses one representative task, pushes the spec (private unless --public; the push's
operation id is saved in push-operation.json, and a rerun reconnects to it), then
diagnoses the uploaded spec, printing every task's outcome. Exit 0 only when all passed.
"""

import argparse
import sys
from pathlib import Path

from trajectory import Client

from traj2env_assets.trajectory_export.workflow import UploadSettings, run_upload

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--agent-name", required=True)
parser.add_argument("--name", default=BENCHMARK_NAME, help="default: the dataset's output.dataset_name")
parser.add_argument("--public", action="store_true", help="make the spec public (default: private)")
parser.add_argument("--no-build", action="store_true", help="upload without building the image (no spec diagnostic)")
parser.add_argument("--skip-task-diagnostic", action="store_true", help="push without diagnosing one task first")
parser.add_argument("--skip-spec-diagnostic", action="store_true", help="do not diagnose the spec after the push")
args = parser.parse_args()
settings = UploadSettings(
    agent_name=args.agent_name, name=args.name, visibility="public" if args.public else "private",
    build_images=not args.no_build, task_diagnostic=not args.skip_task_diagnostic,
    benchmark_diagnostic=not args.skip_spec_diagnostic,
)
outcome = run_upload(Client(), Path(__file__).resolve().parent, settings, sys.stdout)
print(f"result: {outcome.status}" + (f", bench_id {outcome.bench_id}" if outcome.bench_id else ""))
sys.exit(0 if outcome.status == "ok" else 1)
'''


def upload_script(benchmark_name: str) -> str:
    """upload.py for a spec whose benchmark is named after the dataset (``output.dataset_name``)."""
    return UPLOAD_TEMPLATE.replace("default=BENCHMARK_NAME,", f"default={benchmark_name!r},", 1)

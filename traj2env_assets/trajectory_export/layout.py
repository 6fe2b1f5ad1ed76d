"""The exported spec's file layout (the one owner of these names).

::

    <out>/upload.py                 runs on the host: diagnoses a task, pushes, diagnoses the spec
    <out>/push-operation.json       the last push's operation id, for upload.py to reconnect
    <out>/benchmark/Dockerfile      the harness image (root of the build context)
    <out>/benchmark/harness.py      runs in the image for one task
    <out>/benchmark/tasks.json      TaskIndex: per task its settings (split, limits, bounds)
    <out>/benchmark/tasks.tar.gz    the Harbor task directories (without solution/)
    <out>/benchmark/base-images/    `docker save` archives of the tasks' FROM images
    <out>/benchmark/wheelhouse/     the harness's Python packages, installed offline
    <out>/benchmark/traj2env_assets/ the modules the harness imports (sandbox, verifier)
"""

from __future__ import annotations

BENCHMARK_DIR = "benchmark"
DOCKERFILE = "Dockerfile"
HARNESS_FILE = "harness.py"
TASK_INDEX_FILE = "tasks.json"
TASKS_ARCHIVE = "tasks.tar.gz"
BASE_IMAGES_DIR = "base-images"
WHEELHOUSE_DIR = "wheelhouse"
REQUIREMENTS_FILE = "requirements.txt"
UPLOAD_SCRIPT = "upload.py"
OPERATION_FILE = "push-operation.json"
PACKAGE_DIR = "traj2env_assets"

APP_DIR = "/app"
TASKS_DIR = "/app/tasks"

# What the harness imports from this package, copied into the build context as is.
HARNESS_MODULES = (
    "__init__.py",
    "docker_engine/__init__.py",
    "docker_engine/labels.py",
    "docker_engine/sandbox.py",
    "trajectory_export/__init__.py",
    "trajectory_export/layout.py",
    "trajectory_export/task_index.py",
    "verification/__init__.py",
    "verification/verifier.py",
)
# Inside docker build PyPI is unreachable: these are downloaded on the host into the wheelhouse.
HARNESS_REQUIREMENTS = ("trajectory-sdk", "docker", "pydantic")

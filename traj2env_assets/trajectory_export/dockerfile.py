"""The harness image's Dockerfile (Debian trixie's Docker engine, offline wheels, the tasks)."""

from __future__ import annotations

from traj2env_assets.conventions import PYTHON_BASE_IMAGE
from traj2env_assets.trajectory_export.layout import (
    APP_DIR,
    BASE_IMAGES_DIR,
    HARNESS_FILE,
    PACKAGE_DIR,
    REQUIREMENTS_FILE,
    TASK_INDEX_FILE,
    TASKS_ARCHIVE,
    TASKS_DIR,
    WHEELHOUSE_DIR,
)

# The task images' base: the offline stand-in the engine already has serves this image too.
HARNESS_BASE_IMAGE = PYTHON_BASE_IMAGE
ENGINE_PACKAGES = ("docker.io", "docker-cli", "docker-compose", "ca-certificates", "iptables")
ENGINE_CHECKS = ("docker --version", "docker compose version", "dockerd --version")


def harness_dockerfile() -> str:
    # Debian's python3 is "externally managed" (PEP 668): the harness owns this image, so
    # its packages go into the system interpreter. The engine checks run at build time, as
    # the note asks: a sandbox with docker_engine=True needs dockerd, the CLI and Compose
    # (Debian trixie's packages) in the image.
    return f"""FROM {HARNESS_BASE_IMAGE}
RUN apt-get update \\
    && apt-get install -y --no-install-recommends \\
       {" ".join(ENGINE_PACKAGES)} \\
    && {" && ".join(ENGINE_CHECKS)} \\
    && rm -rf /var/lib/apt/lists/*
COPY {WHEELHOUSE_DIR}/ /tmp/{WHEELHOUSE_DIR}/
RUN python3 -m pip install --no-cache-dir --break-system-packages --no-index \\
        --find-links /tmp/{WHEELHOUSE_DIR} -r /tmp/{WHEELHOUSE_DIR}/{REQUIREMENTS_FILE} \\
    && rm -rf /tmp/{WHEELHOUSE_DIR} \\
    && python3 -c "import trajectory, docker, httpx2, pydantic"
WORKDIR {APP_DIR}
COPY {BASE_IMAGES_DIR}/ {APP_DIR}/{BASE_IMAGES_DIR}/
COPY {TASKS_ARCHIVE} {APP_DIR}/{TASKS_ARCHIVE}
RUN mkdir -p {TASKS_DIR} && tar -xzf {APP_DIR}/{TASKS_ARCHIVE} -C {TASKS_DIR} && rm {APP_DIR}/{TASKS_ARCHIVE}
COPY {PACKAGE_DIR}/ {APP_DIR}/{PACKAGE_DIR}/
COPY {HARNESS_FILE} {TASK_INDEX_FILE} {APP_DIR}/
RUN python3 {APP_DIR}/{HARNESS_FILE} --self-check
"""

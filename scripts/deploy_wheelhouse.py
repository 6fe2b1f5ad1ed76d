"""The deployment image's wheelhouse: every package of ``uv.lock`` and the project's own
wheel, for the image's Python (the task images' platform, ``dependencies.wheelhouse``),
downloaded on the host because builds reach no package index.

Usage: ``.venv/bin/python scripts/deploy_wheelhouse.py deploy/wheelhouse``
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import uv

from traj2env_assets.dependencies.wheelhouse import download_wheels

REPO_ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = "requirements.txt"


def main(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    requirements = target / REQUIREMENTS
    subprocess.run(
        [
            uv.find_uv_bin(),
            "export",
            "--quiet",
            "--frozen",
            "--no-hashes",
            "--no-dev",
            "--no-emit-project",
            "--extra",
            "scan",
            "--format",
            "requirements-txt",
            "-o",
            str(requirements),
        ],
        cwd=REPO_ROOT,
        check=True,
    )
    # `name==version ; marker` lines; the indented lines are uv's "# via" comments.
    pins = [
        line.strip()
        for line in requirements.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line[0].isspace() and not line.startswith("#")
    ]
    download_wheels(pins, target)
    for stale in target.glob("traj2env-*.whl"):
        stale.unlink()
    subprocess.run(
        [uv.find_uv_bin(), "build", "--quiet", "--wheel", "--out-dir", str(target)], cwd=REPO_ROOT, check=True
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))

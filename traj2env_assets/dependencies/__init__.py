"""Python dependencies of a project, made installable offline in its task image.

``declared_requirements(files)`` reads what a project declares (root ``requirements*.txt``,
``pyproject.toml`` ``[project]`` dependencies, ``setup.cfg`` ``install_requires``, and
their test/dev extras and groups); ``build_wheelhouse(requirements, pinned_at, root)``
resolves them on the host with uv, as of the trajectory's time (``--exclude-newer``),
for the image's platform, and downloads the wheels into a wheelhouse cached by content.
The image installs them with ``pip install --no-index --find-links``
(``python_environment``: the Dockerfile lines, shared by the families).
"""

from traj2env_assets.dependencies.declared import declared_requirements
from traj2env_assets.dependencies.install import (
    DependenciesNotInstallable,
    EnvironmentPlan,
    python_environment,
)
from traj2env_assets.dependencies.wheelhouse import (
    DependencyResolutionError,
    Wheelhouse,
    build_wheelhouse,
)

__all__ = [
    "DependenciesNotInstallable",
    "DependencyResolutionError",
    "EnvironmentPlan",
    "Wheelhouse",
    "build_wheelhouse",
    "declared_requirements",
    "python_environment",
]

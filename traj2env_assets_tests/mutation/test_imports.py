"""Which test modules reach a source file through the project's imports."""

from __future__ import annotations

from traj2env_assets.mutation.imports import importing_test_modules

FILES = {
    "pkg/__init__.py": "from .core import run\n",
    "pkg/core.py": "from . import util\n\ndef run():\n    return util.helper()\n",
    "pkg/util.py": "def helper():\n    return 1\n",
    "other.py": "X = 1\n",
    "tests/helpers.py": "import other\n",
    "tests/test_pkg.py": "from pkg import run\n",
    "tests/test_other.py": "import helpers\n",
}


def test_imports_are_followed_through_packages_relative_imports_and_test_helpers() -> None:
    reaching = importing_test_modules(FILES, ["tests/test_other.py", "tests/test_pkg.py"])
    assert reaching is not None
    assert reaching["pkg/util.py"] == ["tests/test_pkg.py"]
    assert reaching["pkg/core.py"] == ["tests/test_pkg.py"]
    assert reaching["other.py"] == ["tests/test_other.py"]
    assert reaching["tests/test_pkg.py"] == []


def test_dynamic_imports_and_importing_conftests_make_every_test_count() -> None:
    dynamic = {**FILES, "tests/test_dyn.py": "import importlib\nmod = importlib.import_module('pkg')\n"}
    assert importing_test_modules(dynamic, ["tests/test_dyn.py"]) is None
    conftest = {**FILES, "tests/conftest.py": "import pkg\n"}
    assert importing_test_modules(conftest, ["tests/test_pkg.py"]) is None

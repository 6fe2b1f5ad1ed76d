"""The facts several parts of traj2env must agree on, each stated once.

- the task images: their Python and Node.js versions, base image names and platform;
- digests that are cache keys and task ids (sha256 of JSON, of a file);
- what a test file is, and the files a test harness or a check reads on its own.

A leaf module: it imports nothing of ``traj2env_assets``, so every part, ``docker_engine``
included, may import it. Changing a digest helper changes cache keys and task ids.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

# ---- The task images ---------------------------------------------------------------------
# Debian trixie ships the same versions, so the offline stand-ins (docker_engine.base_images)
# honestly carry these names.
IMAGE_PYTHON_VERSION = "3.13"
IMAGE_NODE_MAJOR = "20"
PYTHON_BASE_IMAGE = f"python:{IMAGE_PYTHON_VERSION}-slim"
NODE_BASE_IMAGE = f"node:{IMAGE_NODE_MAJOR}-slim"

# Task images are built and run for this platform unless the engine is told otherwise.
IMAGE_PLATFORM = "linux/amd64"
# The platform's machine name, as wheel tags and uv spell it.
IMAGE_MACHINE = "x86_64"
# Wheels only, for glibc 2.28 or older: what uv resolves for.
IMAGE_UV_PLATFORM = f"{IMAGE_MACHINE}-manylinux_2_28"


def wheel_platform_tag(policy: str) -> str:
    """A wheel platform tag for the image's machine (``manylinux2014`` -> ``manylinux2014_x86_64``)."""
    return f"{policy}_{IMAGE_MACHINE}"


# pip takes the tags one by one; a manylinux_2_28 system also runs every older manylinux.
IMAGE_WHEEL_PLATFORM_TAGS = tuple(
    wheel_platform_tag(policy)
    for policy in ("manylinux_2_28", "manylinux_2_17", "manylinux2014", "manylinux_2_5", "manylinux1", "linux")
)


# ---- Digests -----------------------------------------------------------------------------
# Cache keys and ids are the sha256 of a JSON text; the exact json.dumps spelling is part of
# every stored key, so each spelling in use has its own function and none may change.


def sorted_json_sha256(value: object, *, default: Callable[[object], object] | None = None) -> str:
    """The sha256 (hex) of ``json.dumps(value, sort_keys=True, default=default)``."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=default).encode()).hexdigest()


def compact_sorted_json_sha256(value: object) -> str:
    """The sha256 (hex) of ``value`` as JSON with sorted keys and no spaces after separators."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    """The sha256 (hex) of a file's bytes, read in 1 MiB chunks (wheels and data files are large)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# ---- Test files ----------------------------------------------------------------------------
# A test path is test code or test support: anything under a test directory (fixtures, data,
# a package's __init__.py) and test files by name. The verifier deletes every test path from
# a submission and restores the pristine ones, so only solution code crosses; mining and the
# families use the same rule for "is this a test". Where a use deliberately differs it says so.
TEST_DIR_NAMES = frozenset({"test", "tests", "__tests__", "spec"})
JS_EXTENSIONS = ("js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx")
# pytest's default ``python_files``: the modules pytest collects tests from.
PYTHON_TEST_MODULE_GLOBS = ("test_*.py", "*_test.py")
# unittest discovery's default ``-p`` pattern (wider than pytest's: ``tests.py`` too).
UNITTEST_MODULE_GLOB = "test*.py"
# pytest's and unittest's default file patterns, node --test's, jest's, mocha's and vitest's.
TEST_FILE_GLOBS = (
    *PYTHON_TEST_MODULE_GLOBS,
    *(
        f"{pattern}.{ext}"
        for ext in JS_EXTENSIONS
        for pattern in ("*.test", "*.spec", "*-test", "*_test", "test-*", "test")
    ),
)


def is_test_path(path: str) -> bool:
    """A test file, or a file anywhere under a test directory."""
    parts = PurePosixPath(path).parts
    return any(part in TEST_DIR_NAMES for part in parts[:-1]) or any(
        fnmatchcase(parts[-1], glob) for glob in TEST_FILE_GLOBS
    )


def restored_root(path: str) -> str:
    """What the verifier restores for one test path: its outermost test directory, or the file."""
    parts = PurePosixPath(path).parts
    for index, part in enumerate(parts[:-1]):
        if part in TEST_DIR_NAMES:
            return PurePosixPath(*parts[: index + 1]).as_posix()
    return path


def is_python_test_module(path: str) -> bool:
    """A module pytest collects tests from by default (narrower than a test path: a test
    directory's helpers and data are test support, not test modules)."""
    return any(fnmatchcase(PurePosixPath(path).name, glob) for glob in PYTHON_TEST_MODULE_GLOBS)


# The JavaScript test files a runner finds with no file arguments, as the repair family
# reads a recorded ``node --test`` or jest run: files under ``test/`` (node), ``__tests__/``
# (jest) or ``tests/``, and ``*.test``/``*-test``/``*_test`` ``.js``/``.mjs``/``.cjs`` files.
# Narrower than a test path (JavaScript only, no ``spec``) because it picks the files a run
# executed. It misses node's own ``test.js`` and ``test-*.js``: a known gap, kept so that
# written tasks stay as they are.
JS_RUNNER_DEFAULT_TEST_FILE = re.compile(
    r"(^|/)(test|tests|__tests__)/.*\.[cm]?js$|\.test\.[cm]?js$|-test\.[cm]?js$|_test\.[cm]?js$"
)

# The in-container tamper check (verification/verifier_files/tamper_check.mjs, which cannot
# import this module) lets test files import node:test and vitest: its TEST_FILE regex is
# is_test_path for JavaScript sources, as traj2env_assets_tests/test_conventions.py checks.


# ---- Files a harness or a check reads on its own --------------------------------------------
# The verifier restores these from the pristine image (anywhere in the project), so a
# submission's copy never reaches the test run: ``harness_files`` in harbor.task_spec picks
# the set of a runner.
PYTHON_HARNESS_FILES = frozenset(
    {"conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", "sitecustomize.py", "usercustomize.py"}
)
NODE_HARNESS_FILES = frozenset(
    {
        "package.json",
        "package-lock.json",
        ".npmrc",
        ".mocharc.json",
        ".mocharc.js",
        ".mocharc.cjs",
        ".mocharc.yml",
        ".mocharc.yaml",
        "jest.config.js",
        "jest.config.cjs",
        "jest.config.mjs",
        "jest.config.ts",
        "vitest.config.js",
        "vitest.config.mjs",
        "vitest.config.ts",
        "tsconfig.json",
        "babel.config.js",
        ".babelrc",
    }
)
# Files that configure a lint or type check (ruff, mypy, tsc, eslint), and the tools' caches.
LINT_HARNESS_FILES = frozenset(
    {
        "pyproject.toml",
        "setup.cfg",
        "tox.ini",
        "ruff.toml",
        ".ruff.toml",
        "mypy.ini",
        ".mypy.ini",
        ".flake8",
        "sitecustomize.py",
        "usercustomize.py",
        ".ruff_cache",
        ".mypy_cache",
        ".dmypy.json",
        "package.json",
        "package-lock.json",
        ".npmrc",
        "tsconfig.json",
        "jsconfig.json",
        "tsconfig.base.json",
        ".eslintrc",
        ".eslintrc.js",
        ".eslintrc.cjs",
        ".eslintrc.json",
        ".eslintrc.yml",
        ".eslintrc.yaml",
        ".eslintignore",
        "eslint.config.js",
        "eslint.config.mjs",
        "eslint.config.cjs",
        ".eslintcache",
        "biome.json",
        "biome.jsonc",
    }
)

# Files whose mere change alters how a check runs or what it counts as a failure: a recorded
# fix that changes one is not a fix of the code (the repair family's
# ``fix_changes_check_config``). Wider than the harness files, which must be exact names for
# the verifier's ``find`` (hence the patterns here), and without pyproject.toml and
# package.json, whose check sections the repair family compares instead.
CHECK_CONFIG_FILE_NAMES = frozenset(
    {
        "pytest.ini",
        "tox.ini",
        "setup.cfg",
        "conftest.py",
        "noxfile.py",
        ".coveragerc",
        "mypy.ini",
        ".mypy.ini",
        "ruff.toml",
        ".ruff.toml",
        ".flake8",
        "sitecustomize.py",
        "usercustomize.py",
        ".npmrc",
        ".babelrc",
        "babel.config.js",
        ".eslintignore",
        ".prettierrc",
        "biome.json",
        "biome.jsonc",
        ".mocharc.json",
        ".mocharc.js",
        ".mocharc.cjs",
        ".mocharc.yml",
        ".mocharc.yaml",
    }
)
CHECK_CONFIG_FILE_PATTERN = re.compile(
    r"^(tsconfig(\..*)?\.json|jsconfig\.json|\.eslintrc(\..*)?|eslint\.config\..*|"
    r"(jest|vitest|vite)\.config\..*|\.pth)$|\.pth$"
)


def is_check_config_name(name: str) -> bool:
    """A file name whose change alters a check (pyproject.toml and package.json aside)."""
    return name in CHECK_CONFIG_FILE_NAMES or bool(CHECK_CONFIG_FILE_PATTERN.search(name))

"""The shared facts of ``traj2env_assets.conventions``: the rules themselves, the digests they
have always given, and the in-container copies that cannot import them."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from datetime import date
from importlib import resources
from pathlib import Path

import pytest

from traj2env_assets.conventions import (
    IMAGE_MACHINE,
    IMAGE_NODE_MAJOR,
    IMAGE_PLATFORM,
    IMAGE_PYTHON_VERSION,
    IMAGE_WHEEL_PLATFORM_TAGS,
    JS_EXTENSIONS,
    JS_RUNNER_DEFAULT_TEST_FILE,
    LINT_HARNESS_FILES,
    NODE_BASE_IMAGE,
    NODE_HARNESS_FILES,
    PYTHON_BASE_IMAGE,
    PYTHON_HARNESS_FILES,
    compact_sorted_json_sha256,
    file_sha256,
    is_check_config_name,
    is_python_test_module,
    is_test_path,
    restored_root,
    sorted_json_sha256,
)
from traj2env_assets.docker_engine.base_images import NODE_SLIM, PYTHON_SLIM
from traj2env_assets.docker_engine.connection import DEFAULT_PLATFORM
from traj2env_assets.harbor.task_spec import BASE_IMAGES, harness_files

# Machine names as Docker platforms spell them (wheel tags and uv use the left ones).
DOCKER_ARCHITECTURES = {"x86_64": "amd64", "aarch64": "arm64"}
SAMPLE = {"b": [1, 2.5, None, True], "a": {"z": "é", "y": "☃"}}


def test_the_image_names_carry_the_versions() -> None:
    assert PYTHON_BASE_IMAGE == "python:3.13-slim" == f"python:{IMAGE_PYTHON_VERSION}-slim"
    assert NODE_BASE_IMAGE == "node:20-slim" == f"node:{IMAGE_NODE_MAJOR}-slim"
    assert BASE_IMAGES == {"python": PYTHON_BASE_IMAGE, "node": NODE_BASE_IMAGE}
    # The offline stand-ins are checked against the same versions their tags name.
    assert (PYTHON_SLIM.name, PYTHON_SLIM.version_prefix) == (PYTHON_BASE_IMAGE, "Python 3.13.")
    assert (NODE_SLIM.name, NODE_SLIM.version_prefix) == (NODE_BASE_IMAGE, "v20.")


def test_the_platform_and_its_wheel_tags_name_one_machine() -> None:
    assert DEFAULT_PLATFORM == IMAGE_PLATFORM == "linux/amd64"
    assert f"linux/{DOCKER_ARCHITECTURES[IMAGE_MACHINE]}" == IMAGE_PLATFORM
    assert IMAGE_WHEEL_PLATFORM_TAGS[0] == "manylinux_2_28_x86_64"
    assert all(tag.endswith(f"_{IMAGE_MACHINE}") for tag in IMAGE_WHEEL_PLATFORM_TAGS)


# Each digest helper against the json.dumps spelling its call sites used before it existed,
# and against a digest written down once: a helper that changed would change stored keys.
def test_sorted_json_sha256_keeps_the_historical_digest() -> None:
    expected = hashlib.sha256(json.dumps(SAMPLE, sort_keys=True).encode()).hexdigest()
    assert sorted_json_sha256(SAMPLE) == expected
    assert expected == "f17e305a08be5983e3428afd6c6b0941e2bf778acb53a4691fca07631e67b8f7"


def test_sorted_json_sha256_with_str_default_keeps_the_data_version_digest() -> None:
    value = {"when": date(2026, 1, 2), "n": 1}
    expected = hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()
    assert sorted_json_sha256(value, default=str) == expected
    assert expected == "220b3527f2a31492f5425522b72d1f1c1e7396e5c7939c7caf0c7e12c780c6df"
    with pytest.raises(TypeError):
        sorted_json_sha256(value)


def test_sorted_keys_change_nothing_for_a_list_without_mappings() -> None:
    # The scan gate's settings list: its key was made without sort_keys.
    settings = ["abc", True, "high", None, ["b", "a"], [], 3]
    assert sorted_json_sha256(settings) == hashlib.sha256(json.dumps(settings).encode()).hexdigest()


def test_compact_sorted_json_sha256_keeps_the_llm_cache_digest() -> None:
    expected = hashlib.sha256(json.dumps(SAMPLE, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert compact_sorted_json_sha256(SAMPLE) == expected
    assert expected == "accf16e02cc7c090e9ba7ef567c5086c6932bc7b5a936b8c13be84fd764837c2"
    assert compact_sorted_json_sha256(SAMPLE) != sorted_json_sha256(SAMPLE)


def test_file_sha256_is_the_digest_of_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"traj2env\n" * 3)
    assert file_sha256(path) == "733f7018e41349e1a80f01e4afcf8c8b768e3bb90f8f61e1261d1f41f2e94034"
    big = tmp_path / "big.bin"
    big.write_bytes(bytes(range(256)) * 9000)  # more than one chunk
    assert file_sha256(big) == hashlib.sha256(big.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("path", "is_test", "restored"),
    [
        ("tests/test_a.py", True, "tests"),
        ("pkg/tests/data/cases.json", True, "pkg/tests"),
        ("a/spec/x.json", True, "a/spec"),
        ("src/__tests__/e.js", True, "src/__tests__"),
        ("test/unit/test/a.js", True, "test"),
        ("test_a.py", True, "test_a.py"),
        ("pkg/a_test.py", True, "pkg/a_test.py"),
        ("src/slug.test.js", True, "src/slug.test.js"),
        ("lib/x.spec.ts", True, "lib/x.spec.ts"),
        ("test-utils.mjs", True, "test-utils.mjs"),
        ("test.js", True, "test.js"),
        ("tests.py", False, "tests.py"),
        ("src/app.py", False, "src/app.py"),
        ("contest.py", False, "contest.py"),
        ("latest.js", False, "latest.js"),
        ("testing/helpers.py", False, "testing/helpers.py"),
        ("specs/a.js", False, "specs/a.js"),
        ("test_a.js", False, "test_a.js"),
        ("a_spec.js", False, "a_spec.js"),
    ],
)
def test_a_test_path_is_a_test_folder_or_a_test_file_name(path: str, is_test: bool, restored: str) -> None:
    assert is_test_path(path) is is_test
    assert restored_root(path) == restored


@pytest.mark.parametrize(
    ("path", "is_module"),
    [
        ("tests/test_a.py", True),
        ("a_test.py", True),
        ("tests/conftest.py", False),
        ("tests/helpers.py", False),  # test support: a test path, not a module pytest collects
        ("tests.py", False),
        ("test_a.js", False),
    ],
)
def test_python_test_modules_are_what_pytest_collects(path: str, is_module: bool) -> None:
    assert is_python_test_module(path) is is_module
    assert not is_module or is_test_path(path)


@pytest.mark.parametrize(
    ("path", "run"),
    [
        ("test/a.js", True),
        ("tests/a.mjs", True),
        ("src/__tests__/a.cjs", True),
        ("a.test.js", True),
        ("a-test.mjs", True),
        ("a_test.cjs", True),
        ("a.spec.js", False),
        ("spec/a.js", False),
        ("a.test.ts", False),
        ("test.js", False),  # node --test runs it: the known gap the convention names
        ("test-a.js", False),
        ("src/a.js", False),
    ],
)
def test_a_js_runner_default_test_file_is_always_a_test_path(path: str, run: bool) -> None:
    assert bool(JS_RUNNER_DEFAULT_TEST_FILE.search(path)) is run
    assert not run or is_test_path(path)


# ---- tamper_check.mjs's TEST_FILE: JavaScript, so held to the Python rule here --------------
_TAMPER_CHECK = (resources.files("traj2env_assets.verification") / "verifier_files" / "tamper_check.mjs").read_text(
    encoding="utf-8"
)


def _js_regex(name: str) -> re.Pattern[str]:
    """A ``const NAME = /.../;`` literal of the script; flagless, in syntax Python reads alike."""
    literal = re.search(rf"^const {name} = /(.+)/;$", _TAMPER_CHECK, re.MULTILINE)
    assert literal, f"tamper_check.mjs has no flagless {name} regex literal"
    return re.compile(literal.group(1))


_DIRS = ("", "src/", "test/", "tests/", "__tests__/", "spec/", "a/test/b/", "specs/", "testdata/", "my-test/")
_STEMS = (
    "app",
    "test",
    "spec",
    "app.test",
    "app.spec",
    "app-test",
    "app_test",
    "test-app",
    "test_app",
    "app-spec",
    "app_spec",
    "spec-app",
    "app.test.helper",
    "test.helper",
    "contest",
    "latest",
    "testing",
)
_SCANNED = [
    f"{folder}{stem}.{ext}"
    for folder, stem, ext in itertools.product(_DIRS, _STEMS, JS_EXTENSIONS)
    if _js_regex("SOURCE_FILE").search(f"{stem}.{ext}")
]


def test_the_table_covers_every_scanned_extension() -> None:
    assert {path.rsplit(".", 1)[1] for path in _SCANNED} == set(JS_EXTENSIONS)


def test_tamper_check_test_files_are_the_test_paths() -> None:
    """Never fewer: a test file the verifier restores is free to import its runner. Never
    more: a file the verifier leaves to the submission is solution code. (One test over the
    whole table: it names every path on which the two disagree.)"""
    test_file = _js_regex("TEST_FILE")
    assert [path for path in _SCANNED if bool(test_file.search(path)) is not is_test_path(path)] == []


# ---- Files a harness or a check reads on its own ---------------------------------------------
def test_each_runner_restores_its_harness_files() -> None:
    assert harness_files("pytest") == PYTHON_HARNESS_FILES
    assert {harness_files(runner) for runner in ("node", "jest", "mocha", "vitest")} == {NODE_HARNESS_FILES}
    assert harness_files("lint") == LINT_HARNESS_FILES


# Harness files that configure nothing: a lock file and the tools' caches.
_NOT_CONFIGURATION = {"package-lock.json", ".ruff_cache", ".mypy_cache", ".dmypy.json", ".eslintcache"}
# Compared section by section by the repair family instead of as a whole file.
_COMPARED_BY_SECTION = {"pyproject.toml", "package.json"}


@pytest.mark.parametrize("name", sorted(PYTHON_HARNESS_FILES | NODE_HARNESS_FILES | LINT_HARNESS_FILES))
def test_a_harness_file_that_configures_is_check_configuration(name: str) -> None:
    """A fix that changes a file the verifier restores anyway is a change of the check."""
    assert is_check_config_name(name) is (name not in _NOT_CONFIGURATION | _COMPARED_BY_SECTION)


@pytest.mark.parametrize(
    ("name", "configures"),
    [
        ("tsconfig.build.json", True),
        ("vite.config.ts", True),
        (".eslintrc.json", True),
        ("local.pth", True),
        ("noxfile.py", True),
        ("pyproject.toml", False),
        ("package.json", False),
        ("app.py", False),
        ("config.json", False),
    ],
)
def test_check_configuration_names(name: str, configures: bool) -> None:
    assert is_check_config_name(name) is configures

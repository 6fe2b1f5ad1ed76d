"""Issue 23: an import hook installed by a real dependency is not harness tampering; the same
hook placed by the submission is. Nor are a dependency's in-memory modules whose ``__file__``
is a relative name of no project file (shiboken's ``shibokensupport/...``), while a module
loaded from a project file under a taken name still shadows.

A wheel made here replaces ``builtins.__import__`` on import the way PySide6's shiboken
does; it is pip-installed into an image like any dependency. ``run_pytest.py`` then runs a
small project's tests as an unprivileged user, in a container with no network, and the
integrity record it signs must name the hook only when the submission could have placed it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUNNER = Path(__file__).resolve().parents[2] / "traj2env_assets" / "verification" / "verifier_files" / "run_pytest.py"
SITE = "/usr/local/lib/python3.13/dist-packages"
INSTALLED_HOOK = f"{SITE}/hookpkg/__init__.py"
CHANGED = "entry_point_changed: builtins.__import__"

HOOK = """import builtins

_original_import = builtins.__import__


def _lazy_import(name, globals=None, locals=None, fromlist=(), level=0):
    return _original_import(name, globals, locals, fromlist, level)


builtins.__import__ = _lazy_import
# shiboken also adds a builtin of its own.
builtins.__hookpkg_import__ = _lazy_import
"""
# Modules made in memory under the package's name with a relative __file__, as shiboken
# registers PySide6.support.* ("shibokensupport/signature/__init__.py", say).
EMBEDDED = """import sys
import types

for _name, _origin in (("hookpkg.support", "hookpkgsupport/__init__.py"),
                       ("hookpkg.support.signature", "hookpkgsupport/signature/__init__.py")):
    _module = types.ModuleType(_name)
    _module.__file__ = _origin
    sys.modules[_name] = _module
"""
# A project file loaded under the installed package's name through a relative location
# (the test run's working directory is the project).
RELATIVE_LOAD = """import importlib.util
import sys

_spec = importlib.util.spec_from_file_location("hookpkg.support", "hookpkgsupport/__init__.py")
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
sys.modules["hookpkg.support"] = _module
"""
ADD = "\n\ndef add(a, b):\n    return a + b\n"
TESTS = {"tests/test_app.py": "from app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"}
# The installed hook's own code, compiled under the installed file's name, but reaching a
# forger of the submission's through its globals.
BORROWED_CODE = f"""import builtins

_real_import = builtins.__import__


def _forging_import(name, *args, **kwargs):
    return _real_import(name, *args, **kwargs)


_namespace = {{}}
exec(compile({HOOK!r}, {INSTALLED_HOOK!r}, "exec"), _namespace)
_namespace["_original_import"] = _forging_import
"""
# Code of the submission's own under the installed file's name.
FORGED_FILENAME = f"""import builtins

_real_import = builtins.__import__
_namespace = {{"_real_import": _real_import}}
exec(compile("def _forging_import(name, *args, **kwargs):\\n    return _real_import(name, *args, **kwargs)\\n",
             {INSTALLED_HOOK!r}, "exec"), _namespace)
builtins.__import__ = _namespace["_forging_import"]
"""


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(directory: Path) -> Path:
    """hookpkg 1.0 as a pure-Python wheel, RECORD and all."""
    files = {
        "hookpkg/__init__.py": HOOK.encode(),
        "hookpkg/embedded.py": EMBEDDED.encode(),
        "hookpkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: hookpkg\nVersion: 1.0\n",
        "hookpkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: traj2env-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{path},{record_hash(data)},{len(data)}\n" for path, data in files.items())
    record += "hookpkg-1.0.dist-info/RECORD,,\n"
    wheel = directory / "hookpkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in {**files, "hookpkg-1.0.dist-info/RECORD": record.encode()}.items():
            archive.writestr(path, data)
    return wheel


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    context = tmp_path_factory.mktemp("import-hooks-image")
    build_wheel(context)
    shutil.copy(RUNNER, context / "run_pytest.py")
    (context / "Dockerfile").write_text(
        "FROM python:3.13-slim\n"
        "COPY hookpkg-1.0-py3-none-any.whl /tmp/\n"
        "RUN python3 -m pip install --no-index --break-system-packages /tmp/hookpkg-1.0-py3-none-any.whl"
        " && useradd --uid 2000 --no-create-home tester\n"
        "COPY run_pytest.py /harness/run_pytest.py\n"
    )
    tag = f"traj2env-test-import-hooks:{uuid.uuid4().hex[:12]}"
    client = docker.from_env()
    client.images.build(path=str(context), tag=tag, network_mode="none", rm=True, forcerm=True)
    yield tag
    client.images.remove(tag, force=True)


def integrity_problems(image: str, project: dict[str, str], tmp_path: Path, as_root: str = "") -> list[str]:
    """Run the project's tests through run_pytest.py as ``tester``; the integrity record's problems."""
    for relative, text in {**TESTS, **project}.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    script = (
        f"{as_root}\n"
        # The pristine project holds the tests alone: every other file is the submission's.
        "cp -a /src /workspace && chown -R tester: /workspace && echo tests > /tmp/restored.txt\n"
        "mkdir /pristine && cp -a /src/tests /pristine/\n"
        "head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > /tmp/key\n"
        "cd /workspace && setpriv --reuid=2000 --regid=2000 --clear-groups env -i PATH=/usr/bin:/bin"
        " python3 -I /harness/run_pytest.py /workspace /pristine /tmp/restored.txt '' -q -p no:cacheprovider tests"
        " 3>/tmp/channel 4</tmp/key >&2\n"
        "cat /tmp/channel\n"
    )
    result = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "-v", f"{tmp_path}:/src:ro", image, "sh", "-euc", script],
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    records = [json.loads(json.loads(line)["body"]) for line in result.stdout.splitlines() if line.strip()]
    reports = {r["id"]: r["outcome"] for r in records if r["kind"] == "report" and r["when"] == "call"}
    assert reports == {"tests/test_app.py::test_add": "passed"}, result.stderr
    return next(r["problems"] for r in records if r["kind"] == "integrity")


def test_a_hook_installed_by_a_dependency_is_not_tampering(image: str, tmp_path: Path) -> None:
    assert integrity_problems(image, {"app.py": "import hookpkg" + ADD}, tmp_path) == []


@pytest.mark.parametrize(
    ("case", "project"),
    [
        ("in the project's code", {"app.py": HOOK + ADD}),
        ("in a conftest.py", {"app.py": ADD, "conftest.py": HOOK}),
        ("installed code reaching the submission's forger", {"app.py": BORROWED_CODE + ADD}),
        ("the submission's code under an installed file's name", {"app.py": FORGED_FILENAME + ADD}),
    ],
)
def test_the_same_hook_from_the_submission_is_tampering(
    image: str, tmp_path: Path, case: str, project: dict[str, str]
) -> None:
    assert CHANGED in integrity_problems(image, project, tmp_path), case


@pytest.mark.parametrize(
    ("case", "as_root"),
    [
        # The installed file no longer matches its RECORD.
        ("an edited installed file", f"printf '\\n_edited = True\\n' >> {INSTALLED_HOOK}"),
        # The test user could have replaced the installed file during the run.
        ("site-packages writable by the test user", f"chown -R tester: {SITE}"),
    ],
)
def test_an_installed_hook_the_run_could_have_written_is_tampering(
    image: str, tmp_path: Path, case: str, as_root: str
) -> None:
    assert CHANGED in integrity_problems(image, {"app.py": "import hookpkg" + ADD}, tmp_path, as_root), case


def test_a_dependencys_in_memory_modules_with_relative_names_are_not_shadowing(image: str, tmp_path: Path) -> None:
    assert integrity_problems(image, {"app.py": "import hookpkg.embedded" + ADD}, tmp_path) == []


@pytest.mark.parametrize(
    ("case", "project", "problem"),
    [
        (
            "a stdlib name",
            {"app.py": "import colorsys" + ADD, "colorsys.py": "x = 1\n"},
            "colorsys loaded from colorsys.py",
        ),
        (
            "a stdlib name, the file deleted once imported",
            {"app.py": "import colorsys, os\nos.remove(colorsys.__file__)" + ADD, "colorsys.py": "x = 1\n"},
            "colorsys loaded from colorsys.py",
        ),
        (
            "an installed package's name, through a relative location",
            {"app.py": RELATIVE_LOAD + ADD, "hookpkgsupport/__init__.py": "x = 1\n"},
            "hookpkg.support loaded from hookpkgsupport/__init__.py",
        ),
    ],
)
def test_a_module_loaded_from_a_new_project_file_under_a_taken_name_is_shadowing(
    image: str, tmp_path: Path, case: str, project: dict[str, str], problem: str
) -> None:
    assert f"module_shadowing: {problem}" in integrity_problems(image, project, tmp_path), case

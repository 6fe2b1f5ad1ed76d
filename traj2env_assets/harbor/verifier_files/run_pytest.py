"""Run pytest as the test user and send every test's outcome to the root-side verdict.

Started by tests/test.sh with ``python3 -I`` (PYTHONPATH, user site-packages and the
working directory are not on sys.path at start-up, so a planted sitecustomize.py or .pth
file is never imported). Usage:
``run_pytest.py PROJECT_ROOT PRISTINE_ROOT RESTORED_PATHS_FILE IMPORT_PATHS PYTEST_ARGS...``

IMPORT_PATHS: the project directories the recorded check had on sys.path (its
PYTHONPATH entries, its directory under ``python -m``), relative to PROJECT_ROOT and
joined with ``:`` (empty for none). They go on sys.path before the project root; one
that does not resolve inside the project is ignored.

The results channel is file descriptor 3, the write end of a pipe that a root process
drains into a file the test user cannot open; the key that signs each record arrives on
descriptor 4 and is read and closed before any project code is imported. Code under test
runs in this process, so it could write to descriptor 3 too, but not sign: an unsigned
record makes the verdict 0. Records:

- ``report``: one per pytest phase report (``id``, ``when``, ``outcome``);
- ``collect``: one per test file whose collection did not pass (``id`` = the file's node
  id, ``outcome``): a file that fails to import is a failing unit of its own;
- ``integrity``: what changed in the test machinery during the run (reporting and
  assertion entry points, hook implementations or test functions that come from the
  submission's own code, modules shadowing the standard library or installed packages);
- ``end``: pytest's exit code. No ``end`` record (``os._exit``, a crash) is reward 0.
"""

import builtins
import hashlib
import hmac
import importlib.metadata
import inspect
import json
import json.encoder
import os
import sys
import unittest
import unittest.case
import unittest.result

import _pytest.main
import _pytest.outcomes
import _pytest.python
import _pytest.reports
import _pytest.runner
import _pytest.skipping
import _pytest.unittest
import pytest

CHANNEL_FD = 3
KEY_FD = 4
# Hooks through which a plugin can change what a test's report says.
WATCHED_HOOKS = (
    "pytest_runtest_protocol", "pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown",
    "pytest_runtest_makereport", "pytest_runtest_logreport", "pytest_report_teststatus",
    "pytest_pyfunc_call", "pytest_collection_modifyitems", "pytest_collectreport",
    "pytest_itemcollected", "pytest_runtestloop", "pytest_sessionfinish", "pytest_deselected",
)
_CLASSES = {
    "TestReport": _pytest.reports.TestReport,
    "BaseReport": _pytest.reports.BaseReport,
    "CallInfo": _pytest.runner.CallInfo,
    "Function": _pytest.python.Function,
    "TestCaseFunction": _pytest.unittest.TestCaseFunction,
    "TestCase": unittest.case.TestCase,
    "TestResult": unittest.result.TestResult,
    "AssertionError": AssertionError,
}
_MODULES = (
    _pytest.runner, _pytest.reports, _pytest.skipping, _pytest.outcomes, _pytest.unittest,
    _pytest.python, _pytest.main, unittest.case, unittest.result, pytest,
    # What the channel and the verdict rely on.
    json, json.encoder, hmac, hashlib, os,
)


# Bound before any project code is imported: the channel never looks these up again, so a
# patched json.dumps, hmac.new or os.write cannot rewrite a record before it is signed.
_ENCODE = json.JSONEncoder(sort_keys=True).encode
_HMAC_NEW = hmac.new
_SHA256 = hashlib.sha256
_WRITE = os.write
_READ = os.read
_CLOSE = os.close


class Channel:
    """Signed JSON lines on descriptor 3: ``{"body": <record as JSON>, "mac": <HMAC-SHA256>}``."""

    def __init__(self) -> None:
        key = b""
        while chunk := _READ(KEY_FD, 4096):
            key += chunk
        _CLOSE(KEY_FD)
        self._key = key.strip()
        self._seq = 0

    def send(self, record: dict) -> None:
        self._seq += 1
        body = _ENCODE({**record, "seq": self._seq})
        mac = _HMAC_NEW(self._key, body.encode(), _SHA256).hexdigest()
        _WRITE(CHANNEL_FD, (_ENCODE({"body": body, "mac": mac}) + "\n").encode())


def entry_points() -> dict[str, object]:
    """The objects a forgery would replace, by name: test machinery classes' attributes,
    module-level functions of pytest's runner and unittest, builtins, imported modules."""
    points: dict[str, object] = {}
    for owner, cls in _CLASSES.items():
        for attr, value in vars(cls).items():
            points[f"{owner}.{attr}"] = value
    for module in _MODULES:
        for attr, value in vars(module).items():
            if callable(value):
                points[f"{module.__name__}.{attr}"] = value
    for attr, value in vars(builtins).items():
        points[f"builtins.{attr}"] = value
    for name, module in list(sys.modules.items()):
        points[f"sys.modules[{name}]"] = module
    return points


def changed_entry_points(before: dict[str, object]) -> list[str]:
    after = entry_points()
    changed = [name for name, value in before.items() if name in after and after[name] is not value]
    # Removed modules are fine (importlib may drop failed imports); new functions on the
    # watched classes and builtins are not (e.g. TestCase.__init_subclass__ planted), new
    # flags are (pytest caches a few on its own classes).
    changed += [
        name for name, value in after.items()
        if name not in before and name.split(".", 1)[0] in (*_CLASSES, "builtins")
        and (callable(value) or isinstance(value, (classmethod, staticmethod, property)))
    ]
    changed += [name for name, value in before.items() if name not in after and not name.startswith("sys.modules[")]
    return sorted(changed)


class Integrity:
    """Where test code and hook code come from, and which modules shadow others."""

    def __init__(self, project_root: str, pristine_root: str, restored_paths_file: str) -> None:
        self.root = os.path.realpath(project_root)
        self.pristine = pristine_root
        self.taken_names = set(sys.stdlib_module_names) | set(importlib.metadata.packages_distributions())
        with open(restored_paths_file, encoding="utf-8") as handle:
            self.restored = [line.strip() for line in handle if line.strip()]
        self.problems: list[str] = []

    def _submitted(self, filename: str | None) -> str | None:
        """The path relative to the project when ``filename`` is solution code (not restored)."""
        if not filename:
            return None
        real = os.path.realpath(filename)
        if not real.startswith(self.root + os.sep):
            return None
        relative = os.path.relpath(real, self.root)
        if any(relative == root or relative.startswith(root + "/") for root in self.restored):
            return None
        return relative

    def check_item(self, item: pytest.Item) -> None:
        function = getattr(item, "obj", None)
        code = getattr(inspect.unwrap(function), "__code__", None) if callable(function) else None
        if code is None:
            return
        filename = os.path.realpath(code.co_filename)
        if filename != os.path.realpath(str(item.path)) and (source := self._submitted(filename)):
            self.problems.append(f"test_replaced: {item.nodeid} runs code from {source}")

    def check_hooks(self, config: pytest.Config) -> None:
        for name in WATCHED_HOOKS:
            for impl in getattr(config.hook, name).get_hookimpls():
                code = getattr(inspect.unwrap(impl.function), "__code__", None)
                if code is not None and (source := self._submitted(code.co_filename)):
                    self.problems.append(f"hook_from_submission: {name} in {source}")

    def check_shadowing(self) -> None:
        for name, module in list(sys.modules.items()):
            top = name.split(".", 1)[0]
            source = self._submitted(getattr(module, "__file__", None))
            # A module the project itself shipped under that name is the project's own.
            shipped = source and os.path.exists(os.path.join(self.pristine, source))
            if source and not shipped and top in self.taken_names:
                self.problems.append(f"module_shadowing: {name} loaded from {source}")


class RecordOutcomes:
    def __init__(self, channel: Channel, integrity: Integrity) -> None:
        self._channel = channel
        self._integrity = integrity

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> None:
        self._integrity.check_item(item)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._channel.send({"kind": "report", "id": report.nodeid, "when": report.when, "outcome": report.outcome})

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # A test file's own report (its node id is its path); folders and classes aside.
        if report.outcome != "passed" and "::" not in report.nodeid and report.nodeid.endswith(".py"):
            self._channel.send({"kind": "collect", "id": report.nodeid, "outcome": report.outcome})

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        for item in session.items:
            self._integrity.check_item(item)
        self._integrity.check_hooks(session.config)


def import_paths(project_root: str, joined: str) -> list[str]:
    """The recorded check's import paths, absolute, each inside the project."""
    root = os.path.realpath(project_root)
    paths = []
    for relative in filter(None, joined.split(":")):
        path = os.path.realpath(os.path.join(root, relative))
        if path == root or path.startswith(root + os.sep):
            paths.append(path)
    return paths


def main() -> int:
    channel = Channel()
    project_root, pristine_root, restored_paths_file, joined_import_paths, *args = sys.argv[1:]
    integrity = Integrity(project_root, pristine_root, restored_paths_file)
    before = entry_points()
    sys.path[0:0] = [*import_paths(project_root, joined_import_paths), project_root]
    code = int(pytest.main(args, plugins=[RecordOutcomes(channel, integrity)]))
    integrity.check_shadowing()
    problems = integrity.problems + [f"entry_point_changed: {name}" for name in changed_entry_points(before)]
    channel.send({"kind": "integrity", "problems": sorted(set(problems))})
    channel.send({"kind": "end", "exit_code": code})
    return code


if __name__ == "__main__":
    sys.exit(main())

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
  an entry point replaced by installed code is excused (see ``InstalledCode``);
- ``end``: pytest's exit code. No ``end`` record (``os._exit``, a crash) is reward 0.
"""

import base64
import builtins
import ctypes
import hashlib
import hmac
import importlib.metadata
import inspect
import json
import json.encoder
import os
import sys
import sysconfig
import types
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
    "pytest_runtest_protocol",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_runtest_teardown",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_report_teststatus",
    "pytest_pyfunc_call",
    "pytest_collection_modifyitems",
    "pytest_collectreport",
    "pytest_itemcollected",
    "pytest_runtestloop",
    "pytest_sessionfinish",
    "pytest_deselected",
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
    _pytest.runner,
    _pytest.reports,
    _pytest.skipping,
    _pytest.outcomes,
    _pytest.unittest,
    _pytest.python,
    _pytest.main,
    unittest.case,
    unittest.result,
    pytest,
    # What the channel and the verdict rely on.
    json,
    json.encoder,
    hmac,
    hashlib,
    os,
)


# Bound before any project code is imported: the channel never looks these up again, so a
# patched json.dumps, hmac.new or os.write cannot rewrite a record before it is signed.
_ENCODE = json.JSONEncoder(sort_keys=True).encode
_HMAC_NEW = hmac.new
_SHA256 = hashlib.sha256
_WRITE = os.write
_READ = os.read
_CLOSE = os.close
# sys.path under -I before the project is added: the standard library and the image's
# installed packages only.
_INSTALLED_PATHS = tuple(sys.path)


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


class InstalledCode:
    """Whether a replaced entry point is the image's installed code rather than the run's.

    Some libraries replace ``builtins.__import__`` or modules in ``sys.modules`` when they
    are imported (PySide6's shiboken installs a lazy-import hook). The verifier runs in a
    fresh container from the task image with only the submission copied in, so the only
    code that can have written a file during the run is the test user's. A value is
    installed code when everything it runs from is a file the test user cannot have
    written: outside the project, neither the file nor any folder above it writable by
    this process, and either in the standard library or listed in the RECORD of a
    distribution installed in the image with a matching sha256. Metadata that code can
    set (``__file__``, ``__wrapped__``, ``co_filename``) is never taken on trust: a Python
    function's code must be compiled from that file, a native function's machine code
    must lie in that file's mapping, and what a function reaches (closure, defaults,
    the globals it names) must be installed code too.
    """

    def __init__(self, project_root: str) -> None:
        self._root = os.path.realpath(project_root)
        self._stdlib = {os.path.realpath(sysconfig.get_path(key)) for key in ("stdlib", "platstdlib")}
        # The interpreter itself, where built-in modules' machine code lives.
        libpython = os.path.join(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("LDLIBRARY") or "")
        self._interpreter = {os.path.realpath(path) for path in (sys.executable, libpython) if path}
        self._recorded: dict[str, str] | None = None
        self._codes: dict[str, list[types.CodeType]] = {}

    def trusted(self, value: object, depth: int = 3) -> bool:
        if isinstance(value, types.ModuleType):
            return self._module(value)
        if isinstance(value, types.BuiltinFunctionType):
            # Bound to an object (a dict's get, say), its behaviour is that object's state.
            owner = value.__self__
            return (owner is None or isinstance(owner, types.ModuleType)) and self._file(native_library(value))
        if isinstance(value, types.FunctionType):
            return self._function(value, depth)
        if isinstance(value, types.MethodType):
            return self.trusted(value.__func__, depth)
        return False

    def _module(self, module: types.ModuleType) -> bool:
        filename = getattr(module, "__file__", None)
        if not self._file(filename):
            return False
        # Its functions must be what that file (or other installed code) defines.
        return all(
            self.trusted(value, depth=1)
            for value in vars(module).values()
            if isinstance(value, (types.FunctionType, types.BuiltinFunctionType))
        )

    def _function(self, function: types.FunctionType, depth: int) -> bool:
        code = function.__code__
        if not self._file(code.co_filename) or not any(same_code(code, c) for c in self._compiled(code.co_filename)):
            return False
        if depth <= 0:
            return True
        reached = [cell.cell_contents for cell in function.__closure__ or () if _filled(cell)]
        reached += [*(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values()]
        reached += [function.__globals__[name] for name in code_names(code) if name in function.__globals__]
        return all(self.trusted(value, depth - 1) for value in reached if _runs_code(value))

    def _file(self, filename: str | None) -> bool:
        if not filename or not os.path.isabs(filename):
            return False
        real = os.path.realpath(filename)
        if real.startswith(self._root + os.sep) or not os.path.isfile(real) or writable(real):
            return False
        if real in self._interpreter:
            return True
        if any(real.startswith(stdlib + os.sep) for stdlib in self._stdlib):
            return "-packages" + os.sep not in real
        expected = self.recorded().get(real)
        return expected is not None and expected == sha256_record(real)

    def recorded(self) -> dict[str, str]:
        """Real path -> RECORD sha256 of every file of the image's installed distributions."""
        if self._recorded is None:
            self._recorded = {}
            for dist in importlib.metadata.distributions(path=list(_INSTALLED_PATHS)):
                for file in dist.files or ():
                    if file.hash and file.hash.mode == "sha256":
                        self._recorded[os.path.realpath(file.locate())] = file.hash.value
        return self._recorded

    def _compiled(self, filename: str) -> list[types.CodeType]:
        real = os.path.realpath(filename)
        if real not in self._codes:
            try:
                with open(real, "rb") as handle:
                    top = compile(handle.read(), filename, "exec", dont_inherit=True)
            except (OSError, SyntaxError, ValueError):
                top = None
            self._codes[real] = list(nested_codes(top)) if top else []
        return self._codes[real]


def _filled(cell: types.CellType) -> bool:
    try:
        _ = cell.cell_contents
    except ValueError:  # an empty cell
        return False
    return True


def _runs_code(value: object) -> bool:
    """What a reached value could run when called: anything callable but classes (an
    isinstance check, a constructor) and modules."""
    return callable(value) and not isinstance(value, (type, types.ModuleType))


def nested_codes(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from nested_codes(const)


def same_code(left: types.CodeType, right: types.CodeType) -> bool:
    return (left.co_name, left.co_firstlineno, left.co_code, left.co_names) == (
        right.co_name,
        right.co_firstlineno,
        right.co_code,
        right.co_names,
    )


def code_names(code: types.CodeType) -> set[str]:
    """Global names a function's code (and code nested in it) looks up."""
    return {name for nested in nested_codes(code) for name in nested.co_names}


def writable(path: str) -> bool:
    """Whether this process could have replaced the file: it or a folder above it is writable."""
    while True:
        if os.access(path, os.W_OK):
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


def sha256_record(path: str) -> str:
    """A file's sha256 as RECORD spells it (urlsafe base64, no padding)."""
    with open(path, "rb") as handle:
        digest = _SHA256(handle.read()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def native_library(function: types.BuiltinFunctionType) -> str | None:
    """The file mapped where a native function's machine code lies (PyCFunctionObject's
    m_ml->ml_meth, looked up in /proc/self/maps), or None when the layout does not check out."""
    pointer = ctypes.sizeof(ctypes.c_void_p)
    try:
        # PyCFunctionObject: refcount, type, then m_ml; PyMethodDef: ml_name, then ml_meth.
        method_def = ctypes.c_void_p.from_address(id(function) + 2 * pointer).value
        if not method_def or ctypes.c_char_p.from_address(method_def).value != function.__name__.encode():
            return None
        address = ctypes.c_void_p.from_address(method_def + pointer).value
        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                span, _, _, _, _, *path = line.split(maxsplit=5)
                low, high = (int(bound, 16) for bound in span.split("-"))
                if address and low <= address < high:
                    return path[0].strip() if path and path[0].startswith("/") else None
    except (OSError, ValueError):
        return None
    return None


def changed_entry_points(before: dict[str, object], installed: InstalledCode) -> list[str]:
    after = entry_points()
    changed = [
        name
        for name, value in before.items()
        if name in after and after[name] is not value and not _installed_replacement(name, after[name], installed)
    ]
    # Removed modules are fine (importlib may drop failed imports); new functions on the
    # watched classes and builtins are not (e.g. TestCase.__init_subclass__ planted), new
    # flags are (pytest caches a few on its own classes).
    changed += [
        name
        for name, value in after.items()
        if name not in before
        and name.split(".", 1)[0] in (*_CLASSES, "builtins")
        and (callable(value) or isinstance(value, (classmethod, staticmethod, property)))
        and not _installed_replacement(name, value, installed)
    ]
    changed += [name for name, value in before.items() if name not in after and not name.startswith("sys.modules[")]
    return sorted(changed)


def _installed_replacement(name: str, value: object, installed: InstalledCode) -> bool:
    """A builtin added or replaced, or a module replaced, by the image's installed code (a
    module only by one of its own name)."""
    if name.startswith("sys.modules["):
        return (
            isinstance(value, types.ModuleType)
            and name == f"sys.modules[{value.__name__}]"
            and installed.trusted(value)
        )
    return name.startswith("builtins.") and installed.trusted(value)


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
        if not os.path.isabs(filename):
            # Imports from sys.path name absolute files; a relative name is a module made in
            # memory that says where it came from (shiboken's embedded "shibokensupport/...").
            # It is solution code only when it names a file in the project.
            filename = os.path.join(self.root, filename)
            if not os.path.isfile(filename):
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
    changed = changed_entry_points(before, InstalledCode(project_root))
    problems = integrity.problems + [f"entry_point_changed: {name}" for name in changed]
    channel.send({"kind": "integrity", "problems": sorted(set(problems))})
    channel.send({"kind": "end", "exit_code": code})
    return code


if __name__ == "__main__":
    sys.exit(main())

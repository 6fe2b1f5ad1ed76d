"""The behaviour gate's calibration probe. Standard library and pytest only: it runs as
root in a container of the task image, networking off, shipped with ``gate_worker.py``.

Usage: ``python3 -I gate_probe.py PLAN_JSON OUT_DIR``. It

1. writes the reference (the solution files, the hidden tests) over the project;
2. runs the task's tests with a recorder (a child process): every call that test code
   (any project file that is not solution code) makes into solution code's public
   functions, classes, methods and properties, as plain data, per test; a test is
   *covered* when it passed and every such call could be recorded and replayed; a test
   that can observe what solution code prints (:func:`observed`) has its cases answered
   with the printing too;
3. makes generalisation cases: each covered test's calls again with perturbed arguments
   (same types and shapes, values drawn around the ones the tests use), seeded;
4. answers every case with ``gate_worker.py`` on the reference twice and on the code
   before the change (the image's own project), each in a fresh process;
5. writes the report (the plan's ``report`` path): the tests, the cases and the three sets
   of answers; its working files stay in ``OUT_DIR``.

Judging (which cases to keep) is done on the host: ``traj2env_assets.stages.calibration.gate_judge``.
"""

import functools
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import types

# For the type checker only: the probe imports nothing it does not use.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("gate_worker", os.path.join(HERE, "gate_worker.py"))
assert _spec is not None and _spec.loader is not None
worker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(worker)

VARIANTS_PER_TEST = 8
# A test making more calls than this (a loop over a range, say) is judged on an evenly
# spread sample of them when its calls are independent (no objects carried between them),
# and its generalisation cases perturb a few of them; with dependent calls it is not covered.
MAX_STEPS_PER_TEST = 120
STEPS_PER_LARGE_VARIANT = 6
MAX_CASES = 240
REPLAY_TIMEOUT_S = 240
RECORD_TIMEOUT_S = 300
MAX_REPORT_BYTES = 900_000
# How a test sees what solution code prints, by what it observes (gate_worker.Printed).
OUTPUT_FIXTURES = {"capsys", "capsysbinary", "capfd", "capfdbinary"}
OUTPUT_WORDS = ("redirect_stdout", "redirect_stderr", "sys.stdout", "sys.stderr")
LOG_FIXTURES = {"caplog"}
LOG_WORDS = ("assertLogs", "assertNoLogs")
EXIT_WORDS = ("SystemExit",)


def observed(fixtures, source):
    """What a test can observe of solution code's printing: ``"output"`` (stdout/stderr),
    ``"logs"`` (log records) and ``"exit"`` (a SystemExit's code), from the fixtures it
    asks for and the words its module
    uses (module-wide: a helper there may capture for it). Only what a test can observe is
    compared: an honest solution may print otherwise where no test looks."""
    found = []
    if OUTPUT_FIXTURES & set(fixtures) or any(word in source for word in OUTPUT_WORDS):
        found.append("output")
    if LOG_FIXTURES & set(fixtures) or any(word in source for word in LOG_WORDS):
        found.append("logs")
    if any(word in source for word in EXIT_WORDS):
        found.append("exit")
    return found


def _module_source(item):
    try:
        with open(str(item.fspath), encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError, AttributeError):
        return ""


# -- 2. recording ------------------------------------------------------------------------


class Recorder:
    """A pytest plugin: wraps solution code's public callables once the tests are collected
    and records, per test, the calls that come straight from project code that is not
    solution code."""

    def __init__(self, root, solution_paths):
        self.root = os.path.realpath(root)
        self.solution_files = {os.path.realpath(os.path.join(root, path)) for path in solution_paths}
        self.tests = {}
        self.modules = {}  # module name -> import root, relative to the project
        self.current = None
        self.local = threading.local()

    # where a call comes from
    def _origin(self, filename):
        real = os.path.realpath(filename)
        # The recorder's own frames (an added constructor) pass through like solution code.
        if real in self.solution_files or os.path.dirname(real) == HERE:
            return "solution"
        if real.startswith(self.root + os.sep) and "site-packages" not in real:
            return "test"
        return "outside"

    def _record(self, kind, target, original, args, kwargs):
        test = self.current
        if test is None or getattr(self.local, "busy", False):
            return original(*args, **kwargs)
        origin = self._origin(sys._getframe(2).f_code.co_filename)
        if origin == "solution":
            return original(*args, **kwargs)
        if origin == "outside":
            test["uncovered"] = test["uncovered"] or "solution code called from outside the project's code"
            return original(*args, **kwargs)
        codec = test["codec"]
        self.local.busy = True
        try:
            step = self._step(kind, target, codec, args, kwargs)
        except worker.Unencodable as error:
            test["uncovered"] = test["uncovered"] or f"{target}: {error}"
            step = None
        finally:
            self.local.busy = False
        try:
            result = original(*args, **kwargs)
        except BaseException:
            if step is not None:
                test["steps"].append(step)
            raise
        if step is not None:
            self.local.busy = True
            try:
                codec.encode_result(args[0] if kind == "init" else result)
                test["steps"].append(step)
            except worker.Unencodable as error:
                test["uncovered"] = test["uncovered"] or f"{target} returned {error}"
            finally:
                self.local.busy = False
        return result

    def _step(self, kind, target, codec, args, kwargs):
        encoded_kwargs = {name: codec.encode_argument(value) for name, value in kwargs.items()}
        if kind in ("function", "static"):
            return {"call": target, "args": [codec.encode_argument(a) for a in args], "kwargs": encoded_kwargs}
        if kind in ("init", "classmethod"):  # the first argument is the new object or the class
            return {"call": target, "args": [codec.encode_argument(a) for a in args[1:]], "kwargs": encoded_kwargs}
        owner = args[0]
        if id(owner) not in codec.handles:
            raise worker.Unencodable("a method of an object no recorded call returned")
        name = target.rsplit(".", 1)[1]
        if kind == "property":
            return {"self": codec.handles[id(owner)], "get": name}
        return {
            "self": codec.handles[id(owner)],
            "method": name,
            "args": [codec.encode_argument(a) for a in args[1:]],
            "kwargs": encoded_kwargs,
        }

    def _wrap(self, kind, target, original):
        recorder = self

        @functools.wraps(original)
        def recorded(*args, **kwargs):
            return recorder._record(kind, target, original, args, kwargs)

        return recorded

    def _wrap_class(self, module_name, cls):
        target = f"{module_name}:{cls.__qualname__}"
        for name, member in list(vars(cls).items()):
            if name.startswith("_") and name != "__init__":
                continue
            if isinstance(member, staticmethod):
                setattr(cls, name, staticmethod(self._wrap("static", f"{target}.{name}", member.__func__)))
            elif isinstance(member, classmethod):
                function = member.__func__
                bound = self._wrap("classmethod", f"{target}.{name}", function)
                setattr(cls, name, classmethod(bound))
            elif isinstance(member, property) and member.fget is not None:
                setattr(
                    cls,
                    name,
                    property(self._wrap("property", f"{target}.{name}", member.fget), member.fset, member.fdel),
                )
            elif isinstance(member, types.FunctionType):
                kind = "init" if name == "__init__" else "method"
                setattr(cls, name, self._wrap(kind, target if kind == "init" else f"{target}.{name}", member))
        if "__init__" not in vars(cls):
            inherited = cls.__init__
            cls.__init__ = self._wrap("init", target, lambda self, *a, **k: inherited(self, *a, **k))

    def install(self):
        """Wrap solution modules' public functions and classes, and rebind the wrapped
        functions wherever project modules imported them by name."""
        replaced = {}
        for name, module in list(sys.modules.items()):
            filename = getattr(module, "__file__", None)
            if not filename or os.path.realpath(filename) not in self.solution_files:
                continue
            relative = os.path.relpath(os.path.realpath(filename), self.root)
            depth = name.count(".") + (1 if os.path.basename(filename) == "__init__.py" else 0)
            root = os.path.dirname(relative)
            for _ in range(depth):
                root = os.path.dirname(root)
            self.modules[name] = root or "."
            for attr, value in list(vars(module).items()):
                if attr.startswith("_"):
                    continue
                if isinstance(value, type) and getattr(value, "__module__", None) == name:
                    self._wrap_class(name, value)
                elif callable(value) and getattr(value, "__module__", None) == name and hasattr(value, "__code__"):
                    wrapped = self._wrap("function", f"{name}:{value.__qualname__}", value)
                    replaced[id(value)] = wrapped
                    setattr(module, attr, wrapped)
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if not filename or self._origin(filename) != "test":
                continue
            namespace = vars(module)
            for attr, value in list(namespace.items()):
                if id(value) in replaced:
                    namespace[attr] = replaced[id(value)]

    # pytest hooks
    def pytest_collection_finish(self, session):
        self.install()

    def pytest_runtest_setup(self, item):
        self.current = self.tests.setdefault(
            item.nodeid,
            {
                "steps": [],
                "uncovered": None,
                "outcome": "passed",
                "codec": worker.Codec(),
                "observe": observed(getattr(item, "fixturenames", ()), _module_source(item)),
            },
        )

    def pytest_runtest_logreport(self, report):
        test = self.tests.get(report.nodeid)
        if test is not None and not report.passed:
            test["outcome"] = report.outcome

    def pytest_runtest_logfinish(self, nodeid, location):
        self.current = None

    def report(self):
        tests = {}
        for nodeid, test in self.tests.items():
            why, steps = test["uncovered"], test["steps"]
            if test["outcome"] != "passed":
                why = f"the test {test['outcome']} on the reference"
            elif not steps and why is None:
                why = "the test calls no solution code directly"
            elif len(steps) > MAX_STEPS_PER_TEST:
                if independent(steps):
                    steps = [steps[index * len(steps) // MAX_STEPS_PER_TEST] for index in range(MAX_STEPS_PER_TEST)]
                else:
                    why = why or f"more than {MAX_STEPS_PER_TEST} calls that depend on each other"
            tests[nodeid] = {
                "steps": steps if why is None else [],
                "covered": why is None,
                "why": why,
                "observe": test["observe"],
            }
        return {"tests": tests, "modules": self.modules}


def independent(steps):
    """No call uses an object an earlier call returned."""
    return all("self" not in step and '"handle"' not in json.dumps(step) for step in steps)


def record(plan, out_path):
    import pytest

    root = plan["workdir"]
    sys.path.insert(0, root)
    recorder = Recorder(root, plan["solution_modules"])
    os.chdir(root)
    code = int(pytest.main([*plan["pytest_args"], *plan["selection"]], plugins=[recorder]))
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump({"exit_code": code, **recorder.report()}, handle)


# -- 3. generalisation cases ---------------------------------------------------------------


def _pools(tests):
    """Every plain value the recorded calls pass, by type: what perturbations draw from."""
    pools: dict[str, set[Any]] = {"int": set(), "float": set(), "str": set(), "chars": set()}

    def walk(value):
        if isinstance(value, bool):
            return
        if isinstance(value, int):
            pools["int"].add(value)
        elif isinstance(value, float):
            pools["float"].add(value)
        elif isinstance(value, str):
            pools["str"].add(value)
            pools["chars"].update(value)
        elif isinstance(value, dict) and value.get("t") in ("list", "tuple", "set", "frozenset", "namedtuple"):
            for item in value["v"]:
                walk(item)
        elif isinstance(value, dict) and value.get("t") == "dict":
            for key, item in value["v"]:
                walk(key)
                walk(item)

    for test in tests.values():
        for step in test["steps"]:
            for value in [*step.get("args", []), *step.get("kwargs", {}).values()]:
                walk(value)
    return {key: sorted(values, key=repr) for key, values in pools.items()}


def _perturb_int(value, rng, pools):
    choices = [value + 1, value - 1, value + rng.randint(2, 9), value - rng.randint(2, 9), value * 2]
    if pools["int"]:
        low, high = min(pools["int"]), max(pools["int"])
        choices += [rng.choice(pools["int"]), rng.randint(low, max(high, low + 1))]
    if value >= 0:
        choices = [choice for choice in choices if choice >= 0] or [value + 1]
    return rng.choice(choices)


def _perturb_str(value, rng, pools):
    chars = pools["chars"] or list("abcdefghij")
    if not value:
        return rng.choice(chars)
    position = rng.randrange(len(value))
    digits = [index for index, char in enumerate(value) if char.isdigit()]
    moves = ["replace", "insert", "case", "pool", "double"] + (["delete"] if len(value) > 1 else [])
    moves += ["digit"] * (3 if digits else 0)
    move = rng.choice(moves)
    if move == "digit":
        index = rng.choice(digits)
        return value[:index] + str((int(value[index]) + rng.randint(1, 9)) % 10) + value[index + 1 :]
    if move == "replace":
        return value[:position] + rng.choice(chars) + value[position + 1 :]
    if move == "insert":
        return value[:position] + rng.choice(chars) + value[position:]
    if move == "case":
        return value[:position] + value[position].swapcase() + value[position + 1 :]
    if move == "pool" and len(pools["str"]) > 1:
        return rng.choice(pools["str"])
    if move == "double":
        return value + value[position:]
    return value[:position] + value[position + 1 :]


def _leaves(value):
    """How many plain values an encoded value holds (where a perturbation can land)."""
    if isinstance(value, (bool, int, float, str)):
        return 1
    if isinstance(value, dict) and value.get("t") in ("list", "tuple", "set", "frozenset", "namedtuple", "dict"):
        items = value["v"]
        return 1 + sum(_leaves(item[1] if value["t"] == "dict" else item) for item in items)
    if isinstance(value, dict) and value.get("t") in ("datetime", "date", "timedelta", "decimal", "fraction"):
        return 1
    return 0


def perturb(value, rng, pools):
    """A nearby value of the same type and shape."""
    if isinstance(value, bool):
        return not value if rng.random() < 0.3 else value
    if isinstance(value, int):
        return _perturb_int(value, rng, pools)
    if isinstance(value, float):
        choices = [value + 0.5, value * 1.5, value - 1.25]
        if pools["float"]:
            choices.append(rng.choice(pools["float"]))
        return rng.choice(choices)
    if isinstance(value, str):
        return _perturb_str(value, rng, pools)
    if not isinstance(value, dict):
        return value
    tag = value.get("t")
    items: Any = value.get("v")
    if tag in ("list", "tuple", "set", "frozenset") and isinstance(items, list):
        items = list(items)
        moves = ["element", "element"]
        # A tuple is a record: its shape stays; other collections may change length.
        if tag != "tuple" and len(items) > 1:
            moves += ["drop", "swap", "reverse"]
        if tag != "tuple" and items:
            moves += ["duplicate", "append"]
        move = rng.choice(moves)
        if move == "element" and items:
            index = rng.randrange(len(items))
            items[index] = perturb(items[index], rng, pools)
        elif move == "drop":
            del items[rng.randrange(len(items))]
        elif move == "swap":
            first, second = rng.sample(range(len(items)), 2)
            items[first], items[second] = items[second], items[first]
        elif move == "reverse":
            items.reverse()
        elif move == "duplicate":
            items.insert(rng.randrange(len(items) + 1), rng.choice(items))
        elif move == "append":
            items.append(perturb(rng.choice(items), rng, pools))
        return {**value, "v": items}
    if tag == "dict" and items:
        items = [list(pair) for pair in items]
        index = rng.randrange(len(items))
        items[index][1] = perturb(items[index][1], rng, pools)
        return {**value, "v": items}
    if tag == "namedtuple" and items:
        items = list(items)
        index = rng.randrange(len(items))
        items[index] = perturb(items[index], rng, pools)
        return {**value, "v": items}
    if tag == "datetime":
        import datetime

        moment = datetime.datetime.fromisoformat(items) + datetime.timedelta(hours=rng.choice([1, -1, 7, -13, 26, -49]))
        return {**value, "v": moment.isoformat()}
    if tag == "date":
        import datetime

        day = datetime.date.fromisoformat(items) + datetime.timedelta(days=rng.choice([1, -1, 3, 31, -40]))
        return {**value, "v": day.isoformat()}
    return value


def variants(nodeid, steps, pools, seed):
    """Up to ``VARIANTS_PER_TEST`` distinct perturbed copies of one test's calls."""
    rng = random.Random(f"{seed}:{nodeid}")
    places = [
        (index, where, key)
        for index, step in enumerate(steps)
        for where in ("args", "kwargs")
        for key, value in (enumerate(step.get(where, [])) if where == "args" else step.get(where, {}).items())
        if _leaves(value)
    ]
    if not places:
        return []
    original = json.dumps(steps, sort_keys=True)
    found: list[Any] = []
    seen = {original}
    # Many independent calls: a variant is a few of them, each perturbed.
    large = len(steps) > STEPS_PER_LARGE_VARIANT and independent(steps)
    for _ in range(VARIANTS_PER_TEST * 6):
        if len(found) >= VARIANTS_PER_TEST:
            break
        copy = json.loads(original)
        if large:
            chosen = rng.sample(places, min(len(places), STEPS_PER_LARGE_VARIANT))
            copy = [copy[index] for index, _, _ in chosen]
            for position, (_, where, key) in enumerate(chosen):
                copy[position][where][key] = perturb(copy[position][where][key], rng, pools)
        else:
            for index, where, key in rng.sample(places, min(len(places), rng.choice([1, 1, 2]))):
                copy[index][where][key] = perturb(copy[index][where][key], rng, pools)
        text = json.dumps(copy, sort_keys=True)
        if text not in seen:
            seen.add(text)
            found.append(copy)
    return found


def cases_of(recorded, seed):
    covered = {nodeid: test for nodeid, test in recorded["tests"].items() if test["covered"]}
    pools = _pools(covered)
    cases = [
        {"id": f"r{n}", "test": nodeid, "kind": "recorded", "steps": test["steps"], "observe": test["observe"]}
        for n, (nodeid, test) in enumerate(sorted(covered.items()))
    ]
    generated = []
    for nodeid, test in sorted(covered.items()):
        generated += [(nodeid, steps) for steps in variants(nodeid, test["steps"], pools, seed)]
    rng = random.Random(seed)
    room = max(0, MAX_CASES - len(cases))
    if len(generated) > room:
        generated = rng.sample(generated, room)
    cases += [
        {"id": f"g{n}", "test": nodeid, "kind": "generalisation", "steps": steps, "observe": covered[nodeid]["observe"]}
        for n, (nodeid, steps) in enumerate(generated)
    ]
    return cases


# -- 4. answers ----------------------------------------------------------------------------


def replay(plan, cases_path, out_path):
    """``gate_worker.py`` in a fresh process, as the verifier runs it (``python3 -I``, the
    answers on descriptor 3)."""
    command = 'exec "$0" -I "$1" "$2" "$3" 3>"$4"'
    run = subprocess.run(
        [
            "bash",
            "-c",
            command,
            sys.executable,
            os.path.join(HERE, "gate_worker.py"),
            plan["workdir"],
            cases_path,
            out_path,
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=REPLAY_TIMEOUT_S,
        check=False,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    found = {}
    with open(out_path, encoding="utf-8") as handle:
        for line in handle:
            try:
                answer = json.loads(line)
                found[answer["id"]] = answer.get("steps")
            except (ValueError, KeyError, TypeError):
                continue
    return found, run.returncode, run.stderr.decode("utf-8", "replace")[-2000:]


def _apply(root, files, deleted):
    for path in deleted:
        target = os.path.join(root, path)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        elif os.path.lexists(target):
            os.remove(target)
    for path, text in files.items():
        target = os.path.join(root, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)


def _restore_before(plan):
    """The project as the image has it, for every file the change touched."""
    root, pristine = plan["workdir"], plan["pristine"]
    for path in [*plan["solution_files"], *plan["solution_deleted"]]:
        target, source = os.path.join(root, path), os.path.join(pristine, path)
        if os.path.lexists(target):
            os.remove(target) if not os.path.isdir(target) else shutil.rmtree(target)
        if os.path.isfile(source):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(source, target)


def _write_report(plan, text):
    os.makedirs(os.path.dirname(plan["report"]), exist_ok=True)
    with open(plan["report"], "w", encoding="utf-8") as handle:
        handle.write(text)


def main():
    plan_path, out_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if len(sys.argv) > 3 and sys.argv[3] == "--record":
        with open(plan_path, encoding="utf-8") as handle:
            record(json.load(handle), os.path.join(out_dir, "recorded.json"))
        return 0
    with open(plan_path, encoding="utf-8") as handle:
        plan = json.load(handle)
    os.makedirs(out_dir, exist_ok=True)
    _apply(plan["workdir"], {**plan["test_files"], **plan["solution_files"]}, plan["solution_deleted"])
    child = subprocess.run(
        [sys.executable, "-I", os.path.abspath(__file__), plan_path, out_dir, "--record"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=RECORD_TIMEOUT_S,
        cwd=plan["workdir"],
        check=False,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "HOME": "/tmp",
        },
    )
    recorded_path = os.path.join(out_dir, "recorded.json")
    if not os.path.isfile(recorded_path):
        output = (child.stdout + child.stderr).decode("utf-8", "replace")[-3000:]
        _write_report(
            plan, json.dumps({"error": f"the recording run left no record (exit {child.returncode}): {output}"})
        )
        return 0
    with open(recorded_path, encoding="utf-8") as handle:
        recorded = json.load(handle)
    cases = cases_of(recorded, plan["seed"])
    cases_path = os.path.join(out_dir, "cases.json")
    with open(cases_path, "w", encoding="utf-8") as handle:
        roots = sorted(set(recorded["modules"].values())) or ["."]
        json.dump(
            {"roots": roots, "cases": [{"id": c["id"], "steps": c["steps"], "observe": c["observe"]} for c in cases]},
            handle,
        )
    answers, logs = {}, {}
    for name in ("reference", "reference_again"):
        answers[name], _, logs[name] = replay(plan, cases_path, os.path.join(out_dir, f"{name}.jsonl"))
    _restore_before(plan)
    answers["before"], _, logs["before"] = replay(plan, cases_path, os.path.join(out_dir, "before.jsonl"))
    report = {
        "tests": {
            nodeid: {"covered": test["covered"], "why": test["why"]} for nodeid, test in recorded["tests"].items()
        },
        "roots": roots,
        "cases": cases,
        "answers": answers,
        "logs": logs,
        "pytest_exit_code": recorded["exit_code"],
    }
    text = json.dumps(report)
    # The host reads at most MAX_REPORT_BYTES: drop generalisation cases until it fits.
    while len(text) > MAX_REPORT_BYTES and any(case["kind"] == "generalisation" for case in report["cases"]):
        generated = [case for case in report["cases"] if case["kind"] == "generalisation"]
        dropped = {case["id"] for case in generated[len(generated) // 2 :]}
        report["cases"] = [case for case in report["cases"] if case["id"] not in dropped]
        for found in answers.values():
            for case_id in dropped:
                found.pop(case_id, None)
        text = json.dumps(report)
    _write_report(plan, text)
    print(f"behaviour gate probe: {len(report['tests'])} tests, {len(cases)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())

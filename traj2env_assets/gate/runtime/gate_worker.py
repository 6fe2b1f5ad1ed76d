"""The behaviour gate's worker and its value codec. Standard library only: it runs in task
images, in calibration (on the reference and on the code before the change) and in the
verifier (on the submission, as the unprivileged user ``solver``).

Usage: ``python3 -I gate_worker.py PROJECT_ROOT CASES_JSON`` with descriptor 3 open for
writing. Each case is a sequence of calls into solution code, recorded from the tests
(``gate_probe.py``): a call of a module-level function, class (a constructor), static or
class method, a method call or attribute read on an object an earlier call returned. The
worker answers each case with one JSON line on descriptor 3, ``{"id": ..., "steps": [...]}``,
one answer per call: ``{"r": value}`` or ``{"x": [exception class names], "m": message}``,
plus ``"a"``/``"k"``, the arguments as they are after the call, and ``"p"``, what the call
printed, for a case whose test can observe printing (the case's ``observe``: ``"output"``,
sys.stdout and sys.stderr as ``capsys`` sees them; ``"logs"``, log records of level INFO
and above as ``caplog`` sees them; ``"exit"``, a ``SystemExit``'s code, which
``pytest.raises(SystemExit)`` sees). Nothing else: whoever reads
the answers compares them (:func:`answers_match`) with the reference's, which the worker
never sees. Values cross as tagged JSON built from their structure (:class:`Codec`), never
as live objects, so no ``__eq__`` of solution code takes part in a comparison.

Everything else the solution code prints goes to descriptor 2; the answers descriptor is the
only output read. Solution code runs in this process and can write there too, but all it
can write is an answer, and an answer is judged by what it says.
"""

import base64
import datetime
import decimal
import enum
import fractions
import importlib
import io
import json
import logging
import math
import os
import pathlib
import signal
import sys

# Annotations name typing's Any for the type checker only: the worker imports nothing it
# does not use (solution code shares the process and its sys.modules).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ANSWERS_FD = 3
STEP_TIMEOUT_S = 10
MAX_DEPTH = 8
MAX_ITEMS = 5000
MESSAGE_CHARS = 300
# What one call printed is kept up to this many characters per stream (a test asserting
# on more than this is judged on its start).
PRINTED_CHARS = 4000
PRINTED_RECORDS = 200
# Relative and absolute tolerance for floats: an honest solution may sum in another order.
FLOAT_REL_TOL = 1e-9
FLOAT_ABS_TOL = 1e-12


class Unencodable(Exception):
    """A value the gate cannot carry as plain data (a function, a generator, a file...)."""


def _qualname(cls):
    return getattr(cls, "__qualname__", None) or getattr(cls, "__name__", "?")


class Codec:
    """Tagged JSON for values. Objects that are not plain data get a handle number in the
    order they appear in call results (not inside other objects' attributes), so later
    calls can name them; the recorder and the worker number them the same way."""

    def __init__(self):
        self.handles = {}  # id(object) -> handle number
        self.objects = []  # handle number -> object (kept alive, so ids stay unique)
        self._items = 0

    # -- encoding -------------------------------------------------------------------
    def encode_result(self, value):
        self._items = 0
        return self._encode(value, 0, register=True, seen=set())

    def encode_argument(self, value):
        """An argument: plain data, or an object an earlier call returned (a handle)."""
        self._items = 0
        return self._encode(value, 0, register=False, seen=set())

    def _register(self, value):
        number = len(self.objects)
        self.handles[id(value)] = number
        self.objects.append(value)
        return number

    def _encode(self, value, depth, register, seen):
        self._items += 1
        if depth > MAX_DEPTH or self._items > MAX_ITEMS:
            raise Unencodable("value too deep or too large")
        kind = type(value)
        if value is None or kind is bool or kind is int or kind is str:
            return value
        if kind is float:
            return value if math.isfinite(value) else {"t": "float", "v": repr(value)}
        if id(value) in self.handles:
            return {"t": "handle", "v": self.handles[id(value)]}
        if isinstance(value, enum.Enum):
            return {"t": "enum", "c": _qualname(kind), "v": self._encode(value.value, depth + 1, False, seen)}
        nested = depth + 1
        if kind is list or kind is tuple:
            items = [self._encode(item, nested, register, seen) for item in value]
            return {"t": kind.__name__, "v": items}
        if isinstance(value, tuple) and hasattr(kind, "_fields"):  # a namedtuple
            items = [self._encode(item, nested, register, seen) for item in tuple.__iter__(value)]
            return {"t": "namedtuple", "c": _qualname(kind), "v": items}
        if isinstance(value, dict):
            pairs = [
                [self._encode(k, nested, register, seen), self._encode(v, nested, register, seen)]
                for k, v in dict.items(value)
            ]
            return {"t": "dict", "v": pairs}
        if isinstance(value, (set, frozenset)):
            items = [self._encode(item, nested, register, seen) for item in value]
            items.sort(key=lambda item: json.dumps(item, sort_keys=True))
            return {"t": "frozenset" if isinstance(value, frozenset) else "set", "v": items}
        if isinstance(value, (bytes, bytearray)):
            return {"t": "bytes", "v": base64.b64encode(bytes(value)).decode()}
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, int):
            return int.__index__(value)
        if isinstance(value, float):
            return self._encode(float.__float__(value), depth, register, seen)
        if isinstance(value, list):
            return {"t": "list", "v": [self._encode(item, nested, register, seen) for item in list.__iter__(value)]}
        if isinstance(value, tuple):
            return {"t": "tuple", "v": [self._encode(item, nested, register, seen) for item in tuple.__iter__(value)]}
        for tag, cls in _TEMPORAL:
            if isinstance(value, cls):
                return {
                    "t": tag,
                    "v": (
                        [value.days, value.seconds, value.microseconds]
                        if isinstance(value, datetime.timedelta)
                        else value.isoformat()
                    ),
                }
        if isinstance(value, decimal.Decimal):
            return {"t": "decimal", "v": str(value)}
        if isinstance(value, fractions.Fraction):
            return {"t": "fraction", "v": str(value)}
        if isinstance(value, complex):
            return {
                "t": "complex",
                "v": [self._encode(value.real, nested, False, seen), self._encode(value.imag, nested, False, seen)],
            }
        if isinstance(value, pathlib.PurePath):
            return {"t": "path", "v": str(value)}
        if isinstance(value, (type, BaseException)) or callable(value) or not _has_state(value):
            raise Unencodable(f"a {_qualname(kind)} is not plain data")
        if not register:
            raise Unencodable(f"a {_qualname(kind)} the tests made themselves")
        number = self._register(value)
        return {"t": "object", "h": number, "c": _qualname(kind), "v": self._state(value, nested, seen)}

    def _state(self, value, depth, seen):
        """An object's public attributes, as plain data (objects inside: their own state)."""
        if id(value) in seen:
            return {"t": "cycle"}
        seen = seen | {id(value)}
        state = {}
        for name, item in sorted(_attributes(value).items()):
            if name.startswith("_"):
                continue
            state[name] = self._snapshot(item, depth + 1, seen)
        return state

    def _snapshot(self, value, depth, seen):
        try:
            return self._encode(value, depth, register=False, seen=seen)
        except Unencodable:
            if depth > MAX_DEPTH or not _has_state(value) or callable(value):
                return {"t": "opaque", "c": _qualname(type(value))}
            return {"t": "object", "c": _qualname(type(value)), "v": self._state(value, depth, seen)}

    # -- decoding (arguments) -------------------------------------------------------
    def decode(self, data):
        if data is None or isinstance(data, (bool, int, float, str)):
            return data
        if isinstance(data, list):  # never emitted bare; tolerated
            return [self.decode(item) for item in data]
        tag, raw = data["t"], data.get("v")
        if tag == "handle":
            return self.objects[raw]
        if tag == "list":
            return [self.decode(item) for item in raw]
        if tag == "tuple":
            return tuple(self.decode(item) for item in raw)
        if tag == "dict":
            return {self.decode(k): self.decode(v) for k, v in raw}
        if tag == "set":
            return {self.decode(item) for item in raw}
        if tag == "frozenset":
            return frozenset(self.decode(item) for item in raw)
        if tag == "float":
            return float(raw)
        if tag == "bytes":
            return base64.b64decode(raw)
        if tag == "datetime":
            return datetime.datetime.fromisoformat(raw)
        if tag == "date":
            return datetime.date.fromisoformat(raw)
        if tag == "time":
            return datetime.time.fromisoformat(raw)
        if tag == "timedelta":
            return datetime.timedelta(days=raw[0], seconds=raw[1], microseconds=raw[2])
        if tag == "decimal":
            return decimal.Decimal(raw)
        if tag == "fraction":
            return fractions.Fraction(raw)
        if tag == "complex":
            return complex(self.decode(raw[0]), self.decode(raw[1]))
        if tag == "path":
            return pathlib.Path(raw)
        raise Unencodable(f"cannot rebuild a {tag} argument")


# datetime before date: a datetime is a date.
_TEMPORAL = (
    ("datetime", datetime.datetime),
    ("date", datetime.date),
    ("time", datetime.time),
    ("timedelta", datetime.timedelta),
)


def _attributes(value):
    """Instance attributes read without running the object's own attribute hooks."""
    found = {}
    try:  # noqa: SIM105 - solution code shares this process and could patch contextlib.suppress
        found.update(object.__getattribute__(value, "__dict__"))
    except (AttributeError, TypeError):
        pass
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            try:  # noqa: SIM105 - as above: no contextlib in reach of solution code
                found[name] = object.__getattribute__(value, name)
            except AttributeError:
                pass
    return found


def _has_state(value):
    return hasattr(type(value), "__dict__") and (
        hasattr(value, "__dict__") or any("__slots__" in cls.__dict__ for cls in type(value).__mro__)
    )


def exception_answer(error):
    names = [_qualname(cls) for cls in type(error).__mro__ if isinstance(cls, type)]
    try:
        message = str(error)[:MESSAGE_CHARS]
    except Exception:  # noqa: BLE001 - a message that cannot be made is no message
        message = ""
    return {"x": names, "m": message}


# -- comparison (used by the verdict, as root, and by calibration) -----------------------


def values_match(expected, actual):
    """Structural equality of two encoded values. Numbers by value (an int equals the same
    float), floats within tolerance; dict entries
    and set members in any order; an object matches when its class name is the same and
    every public attribute the expected object has is there with a matching value."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        # Numbers compare as Python's == does (1 == 1.0: an honest solution may return either),
        # floats within tolerance.
        if type(expected) is int and type(actual) is int:
            return expected == actual
        try:
            return expected == actual or math.isclose(expected, actual, rel_tol=FLOAT_REL_TOL, abs_tol=FLOAT_ABS_TOL)
        except OverflowError:
            return False
    if expected is None or isinstance(expected, str):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, list):  # a dict's [key, value] pair
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(values_match(a, b) for a, b in zip(expected, actual, strict=True))
        )
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return False
    tag = expected.get("t")
    if tag != actual.get("t"):
        return False
    left: Any = expected.get("v")
    right: Any = actual.get("v")
    if tag in ("list", "tuple", "namedtuple", "complex"):
        return (
            expected.get("c") == actual.get("c")
            and isinstance(right, list)
            and len(left) == len(right)
            and all(values_match(a, b) for a, b in zip(left, right, strict=True))
        )
    if tag in ("dict", "set", "frozenset"):
        return isinstance(right, list) and len(left) == len(right) and _unordered_match(left, right)
    if tag == "object":
        return (
            expected.get("c") == actual.get("c")
            and isinstance(right, dict)
            and all(name in right and values_match(value, right[name]) for name, value in left.items())
        )
    if tag == "enum":
        return expected.get("c") == actual.get("c") and values_match(left, right)
    if tag == "float":
        return left == right
    return left == right


def _unordered_match(left, right):
    remaining = list(right)
    for item in left:
        for index, candidate in enumerate(remaining):
            if values_match(item, candidate):
                del remaining[index]
                break
        else:
            return False
    return True


def step_matches(expected, actual, step):
    """One call's answer against the reference's. Exceptions match by class: the expected
    class must be among the actual exception's classes (a subclass is fine); messages are
    free text and are not compared. Arguments are compared after the call only where the
    reference changed them (in-place mutation is then part of the behaviour). What the call
    printed is compared exactly where the reference's answer carries it (``"p"``)."""
    if not isinstance(actual, dict):
        return False
    if "p" in expected and actual.get("p") != expected["p"]:
        return False
    if "x" in expected:
        names = actual.get("x")
        return isinstance(names, list) and expected["x"][0] in names
    if "r" not in actual or not values_match(expected["r"], actual["r"]):
        return False
    for key, given in (("a", step.get("args", [])), ("k", step.get("kwargs", {}))):
        after = expected.get(key)
        if after is not None and after != given and not values_match(after, actual.get(key)):
            return False
    return True


def answers_match(expected_steps, actual_steps, case_steps):
    """Whether a case's answers match the reference's, and the first step that does not."""
    if not isinstance(actual_steps, list) or len(actual_steps) != len(expected_steps):
        return False, "the case was not answered in full"
    for index, (expected, actual, step) in enumerate(zip(expected_steps, actual_steps, case_steps, strict=True)):
        if not step_matches(expected, actual, step):
            return False, f"call {index + 1} ({describe_step(step)}) answered differently"
    return True, ""


def describe_step(step):
    if "call" in step:
        return step["call"].split(":", 1)[1] + "(...)"
    if "get" in step:
        return f"<object {step['self']}>.{step['get']}"
    return f"<object {step['self']}>.{step['method']}(...)"


# -- replay ------------------------------------------------------------------------------


class StepTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise StepTimeout(f"no answer within {STEP_TIMEOUT_S} s")


def _resolve(target):
    module_name, qualname = target.split(":", 1)
    value = importlib.import_module(module_name)
    for part in qualname.split("."):
        value = getattr(value, part)
    return value


def _mutable(values):
    return any(isinstance(value, (list, dict, set, bytearray)) for value in values)


def run_step(codec, step):
    args = [codec.decode(item) for item in step.get("args", [])]
    kwargs = {name: codec.decode(item) for name, item in step.get("kwargs", {}).items()}
    if "call" in step:
        function = _resolve(step["call"])
    else:
        owner = codec.objects[step["self"]]
        if "get" in step:
            return {"r": codec.encode_result(getattr(owner, step["get"]))}
        function = getattr(owner, step["method"])
    result = function(*args, **kwargs)
    answer = {"r": codec.encode_result(result)}
    if _mutable(args) or _mutable(kwargs.values()):
        answer["a"] = [codec.encode_argument(item) for item in args]
        answer["k"] = {name: codec.encode_argument(item) for name, item in kwargs.items()}
    return answer


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.found = []

    def emit(self, record):
        if len(self.found) < PRINTED_RECORDS:
            try:
                message = record.getMessage()
            except Exception:  # noqa: BLE001 - a record whose message cannot be made says so
                message = "<unformattable>"
            self.found.append([record.name, record.levelname, message[:PRINTED_CHARS]])


class Printed:
    """What one call prints, as a test sees it: sys.stdout and sys.stderr swapped for
    buffers (``capsys``), log records through a handler on the root logger (``caplog``),
    which is lowered to INFO for the call so records of INFO and above reach it; and the
    code of a ``SystemExit`` it raised."""

    def __init__(self, observe):
        self.observe = set(observe)
        self.out, self.err, self.records = io.StringIO(), io.StringIO(), _Records()
        self.exit_code = None

    def __enter__(self):
        self._saved = sys.stdout, sys.stderr
        if "output" in self.observe:
            sys.stdout, sys.stderr = self.out, self.err
        root = logging.getLogger()
        self._level = root.level
        if "logs" in self.observe:
            root.addHandler(self.records)
            if root.level == logging.NOTSET or root.level > logging.INFO:
                root.setLevel(logging.INFO)
        return self

    def __exit__(self, *exc):
        sys.stdout, sys.stderr = self._saved
        root = logging.getLogger()
        root.removeHandler(self.records)
        root.setLevel(self._level)
        return False

    def answer(self):
        found: dict[str, object] = {}
        if "output" in self.observe:
            found["out"] = self.out.getvalue()[:PRINTED_CHARS]
            found["err"] = self.err.getvalue()[:PRINTED_CHARS]
        if "logs" in self.observe:
            found["log"] = self.records.found
        if "exit" in self.observe:
            found["exit"] = self.exit_code
        return found


def _exit_code(code):
    """A SystemExit's code as plain data: None, a number, or the text of anything else."""
    if code is None or type(code) is int:
        return code
    try:
        return str(code)[:MESSAGE_CHARS]
    except Exception:  # noqa: BLE001 - a code that cannot be shown is shown as such
        return "<unprintable>"


def answer_case(case):
    codec = Codec()
    answers = []
    observe = [kind for kind in case.get("observe") or [] if kind in ("output", "logs", "exit")]
    for step in case["steps"]:
        printed = Printed(observe)
        signal.alarm(STEP_TIMEOUT_S)
        try:
            with printed:
                answer = run_step(codec, step)
        except Unencodable as error:
            answer = {"e": f"unencodable: {error}"[:MESSAGE_CHARS]}
        except BaseException as error:  # noqa: BLE001 - any failure of solution code (SystemExit too) is its answer
            answer = exception_answer(error)
            if "exit" in observe and isinstance(error, SystemExit):
                printed.exit_code = _exit_code(error.code)
        finally:
            signal.alarm(0)
        if observe and "e" not in answer:
            answer["p"] = printed.answer()
        answers.append(answer)
    return answers


def main():
    project_root, cases_path = sys.argv[1], sys.argv[2]
    with open(cases_path, encoding="utf-8") as handle:
        plan = json.load(handle)
    answers = os.fdopen(os.dup(ANSWERS_FD), "w", encoding="utf-8")
    os.close(ANSWERS_FD)
    # Solution code's prints go to the log, never into the answers.
    os.dup2(2, 1)
    os.chdir(project_root)
    for root in reversed(plan.get("roots", ["."])):
        sys.path.insert(0, os.path.normpath(os.path.join(project_root, root)))
    signal.signal(signal.SIGALRM, _on_alarm)
    for case in plan["cases"]:
        steps = answer_case(case)
        try:
            line = json.dumps({"id": case["id"], "steps": steps}, sort_keys=True)
        except (TypeError, ValueError) as error:
            line = json.dumps({"id": case["id"], "error": str(error)[:MESSAGE_CHARS]})
        answers.write(line + "\n")
        answers.flush()
    answers.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

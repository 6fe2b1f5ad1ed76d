"""Two small hand-made repair tasks: a Python one (pytest) and a Node one (node:test)."""

from __future__ import annotations

from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec

_CALC_TESTS = b"""from calc import add, mean


def test_add():
    assert add(2, 3) == 5


def test_mean():
    assert mean([1, 2, 3]) == 2
"""


def python_task(task_id: str = "calc-fix", *, marker: str = "") -> TaskSpec:
    """``add`` subtracts; the fix makes it add. ``marker`` varies the project bytes."""
    return TaskSpec(
        family="repair",
        task_id=task_id,
        instruction="`tests/test_calc.py::test_add` fails: `add(2, 3)` returns -1. Fix `calc.py`.",
        base_image="python",
        project_files={
            "calc.py": f"# {marker}\ndef add(a, b):\n    return a - b\n\n\n"
            "def mean(values):\n    return sum(values) / len(values)\n".encode(),
            "tests/test_calc.py": _CALC_TESTS,
            "pyproject.toml": b'[project]\nname = "calc"\nversion = "0"\n\n'
            b'[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        },
        solution_files={
            "calc.py": f"# {marker}\ndef add(a, b):\n    return a + b\n\n\n"
            "def mean(values):\n    return sum(values) / len(values)\n".encode(),
        },
        tests=VerifierSpec(
            runner="pytest",
            tracked_test_ids=["tests/test_calc.py::test_add", "tests/test_calc.py::test_mean"],
            test_files={"tests/test_calc.py": _CALC_TESTS.decode()},
            pytest_config="pyproject.toml",
            timeout_sec=120,
        ),
        source_trace="sample-python-session",
        source_model="hand-made",
        agent_timeout_sec=120,
        verifier_timeout_sec=180,
        build_timeout_sec=300,
    )


_SLUG_TESTS = """import test from "node:test";
import assert from "node:assert/strict";
import { slugify } from "../src/slug.js";

test("slugifies every space", () => {
  assert.equal(slugify("Hello big World"), "hello-big-world");
});

test("lower-cases", () => {
  assert.equal(slugify("ABC"), "abc");
});
"""


def node_task(task_id: str = "slug-fix") -> TaskSpec:
    """``slugify`` replaces only the first space; the fix replaces all of them."""
    return TaskSpec(
        family="repair",
        task_id=task_id,
        instruction="`npm test` fails: `slugify('Hello big World')` keeps a space. Fix src/slug.js.",
        base_image="node",
        project_files={
            "package.json": b'{\n  "name": "slug",\n  "type": "module",\n  "scripts": {"test": "node --test"}\n}\n',
            "src/slug.js": b'export function slugify(text) {\n  return text.toLowerCase().replace(" ", "-");\n}\n',
            "test/slug.test.js": _SLUG_TESTS.encode(),
        },
        solution_files={
            "src/slug.js": b'export function slugify(text) {\n  return text.toLowerCase().replaceAll(" ", "-");\n}\n',
        },
        tests=VerifierSpec(
            runner="node",
            tracked_test_ids=[
                "test/slug.test.js::slugifies every space",
                "test/slug.test.js::lower-cases",
            ],
            test_files={"test/slug.test.js": _SLUG_TESTS},
            timeout_sec=120,
        ),
        source_trace="sample-node-session",
        source_model="hand-made",
        agent_timeout_sec=120,
        verifier_timeout_sec=180,
        build_timeout_sec=300,
    )


_HIDDEN_TESTS = """from calc import add, mean


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-2, -3) == -5


def test_mean():
    assert mean([1, 2, 3]) == 2
"""


def build_task(task_id: str = "calc-build") -> TaskSpec:
    """Build ``calc.py`` from a contract; the reward is the fraction of hidden tests passed."""
    return TaskSpec(
        family="build",
        task_id=task_id,
        instruction="Write calc.py with add(a, b) and mean(values), as CONTRACT.md describes.",
        base_image="python",
        project_files={"CONTRACT.md": b"`calc.add(a, b)`: the sum. `calc.mean(values)`: the arithmetic mean.\n"},
        solution_files={
            "calc.py": b"def add(a, b):\n    return a + b\n\n\ndef mean(values):\n    return sum(values) / len(values)\n",
        },
        tests=VerifierSpec(
            runner="pytest",
            tracked_test_ids=[
                "tests/test_hidden.py::test_add",
                "tests/test_hidden.py::test_add_negative",
                "tests/test_hidden.py::test_mean",
            ],
            test_files={"tests/test_hidden.py": _HIDDEN_TESTS},
            reward="fraction",
            timeout_sec=120,
        ),
        source_trace="sample-build-session",
        source_model="hand-made",
        agent_timeout_sec=120,
        verifier_timeout_sec=180,
        build_timeout_sec=300,
    )

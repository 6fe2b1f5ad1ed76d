"""The public surface read with ``ast``: the recorded contract and the behaviour-free stub."""

from __future__ import annotations

import ast

from traj2env_assets.families.build.surface import recorded_contract, stub_source

MODULE = '''"""Shapes."""

import math

SIDES = {"triangle": 3, "square": 4}
CACHE = compute_cache()


class Shape:
    """A shape."""

    kind: str = "shape"

    def __init__(self, size: float) -> None:
        self.size = size

    def area(self) -> float:
        """The area."""
        return self.size ** 2

    def _secret(self):
        return 42


def circle_area(radius: float) -> float:
    """Area of a circle."""
    return math.pi * radius ** 2


def _helper():
    return 1


if __name__ == "__main__":
    print(circle_area(1))
'''


def test_stub_keeps_names_signatures_and_literals_but_no_behaviour() -> None:
    stub = stub_source(MODULE)
    assert stub is not None
    tree = ast.parse(stub)
    functions = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert set(functions) == {"__init__", "area", "_secret", "circle_area", "_helper"}
    for node in functions.values():
        assert isinstance(node.body[-1], ast.Raise)
        assert not any(isinstance(child, ast.Return) for child in ast.walk(node))
    assert ast.unparse(functions["circle_area"].args) == "radius: float"
    assert 'SIDES = {"triangle": 3' in stub.replace("'", '"')
    assert "compute_cache" not in stub and "__main__" not in stub
    assert "import math" in stub and 'kind: str = "shape"' in stub.replace("'", '"')
    namespace: dict[str, object] = {}
    exec(compile(stub, "shapes.py", "exec"), namespace)  # the stub imports cleanly


def test_recorded_contract_lists_public_names_with_docstrings() -> None:
    contract = recorded_contract({"geo/shapes.py": MODULE, "broken.py": "def (:"})
    assert "### `geo/shapes.py` (module `geo.shapes`)" in contract
    assert "def circle_area(radius: float) -> float:" in contract and '"""Area of a circle."""' in contract
    assert "def area(self) -> float:" in contract and "def __init__(self, size: float) -> None:" in contract
    assert "_secret" not in contract and "_helper" not in contract
    assert "math.pi" not in contract and "return" not in contract
    assert "broken.py" not in contract

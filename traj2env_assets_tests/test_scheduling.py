"""The suite's own scheduling: shared units are one xdist work unit each and start first."""

from __future__ import annotations

from types import SimpleNamespace

from traj2env_assets_tests.conftest import SHARED_UNITS, UNIT_ORDER
from traj2env_assets_tests.scheduling import costly_units_first, unit_of


def test_modules_of_a_shared_unit_are_one_unit_and_others_their_own() -> None:
    units = {"a/test_x.py": "shared", "a/test_y.py": "shared"}
    assert unit_of("a/test_x.py::test_one", units) == "shared"
    assert unit_of("a/test_y.py::Test::test_two[1]", units) == "shared"
    assert unit_of("b/test_z.py::test_three", units) == "b/test_z.py"


def test_shared_units_go_first_in_their_order_and_the_rest_keep_theirs() -> None:
    ids = ["a/test_1.py::t", "b/test_late.py::t1", "c/test_2.py::t", "d/test_early.py::t", "b/test_late.py::t2"]
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in ids]
    units = {"d/test_early.py": "early", "b/test_late.py": "late"}
    costly_units_first(items, ["early", "late"], units)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == [
        "d/test_early.py::t",
        "b/test_late.py::t1",
        "b/test_late.py::t2",
        "a/test_1.py::t",
        "c/test_2.py::t",
    ]


def test_the_suite_orders_every_shared_unit() -> None:
    assert set(SHARED_UNITS.values()) == set(UNIT_ORDER)

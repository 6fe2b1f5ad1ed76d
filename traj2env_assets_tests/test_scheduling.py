"""The suite's own scheduling: shared units are one xdist work unit each and start first."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from traj2env_assets_tests.conftest import SHARED_UNITS, UNIT_ORDER
from traj2env_assets_tests.scheduling import ModuleScheduling, costly_units_first, unit_of


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


def test_the_suite_orders_every_shared_unit_and_names_existing_modules() -> None:
    assert set(SHARED_UNITS.values()) <= set(UNIT_ORDER)
    root = Path(__file__).resolve().parents[1]
    assert all((root / unit).is_file() for unit in UNIT_ORDER if unit not in SHARED_UNITS.values())


class _Worker:
    """What the scheduler asks of a worker: tests to run, and a shutdown."""

    def __init__(self) -> None:
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def test_the_scheduler_hands_out_units_in_the_collection_order() -> None:
    """xdist's default sorts units by their number of tests, which would start the costly
    module of two tests after the cheap one of five."""
    collection = ["a/test_costly.py::t1", "a/test_costly.py::t2", *(f"b/test_many.py::t{n}" for n in range(5))]
    option = SimpleNamespace(loadscopereorder=True)
    config = SimpleNamespace(option=option, getvalue=lambda name: ["1*popen"] if name == "tx" else None)
    scheduler = ModuleScheduling(config, None, units={})  # type: ignore[arg-type]
    worker = _Worker()
    scheduler.add_node(worker)
    scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    assert [collection[index] for index in worker.sent[:2]] == ["a/test_costly.py::t1", "a/test_costly.py::t2"]

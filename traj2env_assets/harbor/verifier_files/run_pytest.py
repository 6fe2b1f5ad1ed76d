"""Run pytest and record every test's outcome as JSON lines, for verdict.py.

Started by tests/test.sh as the unprivileged test user with ``python3 -I``, so
PYTHONPATH, user site-packages and the working directory are not on sys.path at
start-up (a planted sitecustomize.py or .pth file is never imported). The project root
is then added the way ``python -m pytest`` adds it. Usage:
``run_pytest.py RESULTS_JSONL PROJECT_ROOT PYTEST_ARGS...``
"""

import json
import sys

import pytest


class RecordOutcomes:
    def __init__(self, path: str) -> None:
        self._handle = open(path, "a", encoding="utf-8")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = {"id": report.nodeid, "when": report.when, "outcome": report.outcome}
        self._handle.write(json.dumps(record) + "\n")
        self._handle.flush()

    def pytest_unconfigure(self) -> None:
        self._handle.close()


def main() -> int:
    results, project_root, *args = sys.argv[1:]
    sys.path.insert(0, project_root)
    return int(pytest.main(args, plugins=[RecordOutcomes(results)]))


if __name__ == "__main__":
    sys.exit(main())

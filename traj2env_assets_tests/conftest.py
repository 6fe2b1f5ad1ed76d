"""Shared test fixtures: a local fake of the LLM providers' HTTP APIs, and the main command's run
on the bundled samples.

The suite runs on two pytest-xdist workers (``make test``: ``-n 2 --dist loadscope``). Each
test module is one work unit (module fixtures, such as the compose deployment, are made
once), and the modules whose tests need ``example_run`` are one unit together, so the
costliest Docker work of the suite runs once (``scheduling.py``). The task images the
session built are removed by the controller at the very end, when no worker can still
be using one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import docker
import pytest
from docker.errors import APIError, DockerException, ImageNotFound
from xdist.remote import Producer

from traj2env_assets.docker_engine.labels import ROLE_LABEL, project_filter
from traj2env_assets_tests import timings
from traj2env_assets_tests.example_run import ExampleRun, run_examples
from traj2env_assets_tests.llm.fake_provider import FakeProvider
from traj2env_assets_tests.scheduling import ModuleScheduling, costly_units_first


@pytest.fixture
def fake_provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    # LiteLLM's OpenAI route needs some key; the fake server ignores it.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    provider = FakeProvider()
    provider.start()
    yield provider
    provider.stop()


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> ExampleRun:
    """``traj2env generate`` on every bundled sample, twice (Docker; shared by the end-to-end
    tests and the honest solutions)."""
    run = run_examples(tmp_path_factory.mktemp("examples-run"))
    timings.record(request.config, "main command on the samples", run.timing())
    return run


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    timings.print_summary(terminalreporter, config)


def pytest_testnodedown(node: object, error: object) -> None:
    # In the controller, as each xdist worker finishes.
    if (output := getattr(node, "workeroutput", None)) is not None:
        timings.take_over(node.config, output)  # type: ignore[attr-defined]


# The modules whose tests use ``example_run``: one work unit on one worker (checked below).
# The attack suites are among them: they attack the sample tasks that run published.
EXAMPLE_RUN_MODULES = frozenset(
    {
        "traj2env_assets_tests/families/test_repair_end_to_end.py",
        "traj2env_assets_tests/honest/test_honest_solutions.py",
        "traj2env_assets_tests/attacks/test_attack_suite.py",
        "traj2env_assets_tests/attacks/test_harbor_attacks.py",
    }
)
SHARED_UNITS = dict.fromkeys(EXAMPLE_RUN_MODULES, "example_run")
# The longest first: the main command on every sample, then what reads its tasks.
UNIT_ORDER = ["example_run"]


# The first test of a shared unit waits for its fixture (two runs of the main command).
SHARED_UNIT_TIMEOUT_S = 3600


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = item.nodeid.split("::")[0]
        if "example_run" in getattr(item, "fixturenames", ()) and module not in EXAMPLE_RUN_MODULES:
            raise pytest.UsageError(f"{module} uses example_run: add it to EXAMPLE_RUN_MODULES")
        if module in SHARED_UNITS and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SHARED_UNIT_TIMEOUT_S))
    costly_units_first(items, UNIT_ORDER, SHARED_UNITS)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> ModuleScheduling | None:
    if config.getvalue("dist") != "loadscope":
        return None
    return ModuleScheduling(config, log, units=SHARED_UNITS)


_TASK_IMAGES_BEFORE = pytest.StashKey[set[str]]()
# Set when another session uses the same engine (a part of the suite run beside a full
# run): the images this session saw appear may be the other's, in the middle of its tests.
KEEP_IMAGES_VARIABLE = "TRAJ2ENV_KEEP_TEST_IMAGES"


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get(KEEP_IMAGES_VARIABLE):
        return
    if not _is_worker(session.config) and (images := _task_images()) is not None:
        session.config.stash[_TASK_IMAGES_BEFORE] = images


def pytest_sessionfinish(session: pytest.Session) -> None:
    timings.hand_over(session.config)
    before = session.config.stash.get(_TASK_IMAGES_BEFORE, None)
    if _is_worker(session.config) or before is None:
        return
    client = docker.from_env()
    for image_id in (_task_images() or set()) - before:
        try:
            client.images.remove(image_id, force=True)
        except ImageNotFound:
            continue
        except APIError as exc:
            # In use by a running container: another session's image on a shared engine.
            if exc.status_code != 409:
                raise


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _task_images() -> set[str] | None:
    """The ids of the engine's task images, or None without a reachable engine."""
    try:
        images = docker.from_env().images.list(filters=project_filter())
    except DockerException:
        return None
    return {image.id for image in images if image.labels.get(ROLE_LABEL) == "task-image"}

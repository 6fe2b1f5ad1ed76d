"""Figures the suite prints at its end (the main command's and the attack suite's timings).

Fixtures run in the xdist workers, the summary is printed by the controller: each
worker hands its lines over in ``workeroutput``, which xdist returns to the controller.
"""

from __future__ import annotations

import pytest

_LINES = pytest.StashKey[dict[str, list[str]]]()
WORKER_OUTPUT_KEY = "traj2env_timings"


def record(config: pytest.Config, section: str, line: str) -> None:
    config.stash.setdefault(_LINES, {}).setdefault(section, []).append(line)


def hand_over(config: pytest.Config) -> None:
    """In a worker: pass the recorded lines to the controller."""
    if (output := getattr(config, "workeroutput", None)) is not None:
        output[WORKER_OUTPUT_KEY] = config.stash.get(_LINES, {})


def take_over(config: pytest.Config, worker_output: dict) -> None:
    """In the controller: keep a finished worker's lines."""
    for section, lines in worker_output.get(WORKER_OUTPUT_KEY, {}).items():
        for line in lines:
            record(config, section, line)


def print_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    for section, lines in config.stash.get(_LINES, {}).items():
        terminalreporter.section(section)
        for line in lines:
            terminalreporter.write_line(line)

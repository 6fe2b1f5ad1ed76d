"""Ctrl-C stops the command, and nothing reruns what the user stopped.

Inside a run Dagster turns SIGINT into a ``DagsterExecutionInterruptedError`` in the
running step: the step's ``finally`` blocks run (a trial matrix sweeps its containers,
a sandbox removes its container). A step with a retry policy is then retried (Dagster
"respects retry policy when interrupts occur"), so the run would go on as if nothing
happened: :func:`interrupts_not_retried` fails such a step for good instead. The run
is marked failed and ``execute_in_process`` returns as for any failure, so the CLI would
go on to the next batch, or rerun the batch key by key: :func:`raise_if_interrupted`
turns that back into a ``KeyboardInterrupt``, which the CLI ends on with exit code 130.

The CLI's runs are never retried by a daemon's ``run_retries`` (``make dev``'s daemon
shares the instance): the CLI reruns a failed batch itself, and a run that was
interrupted or killed is resumed by running the command again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

# Dagster's run-retries tag (dagster._core.storage.tags.MAX_RETRIES_TAG).
NO_DAEMON_RETRIES = {"dagster/max_retries": "0"}


class Interrupted(dg.Failure):
    """A step stopped by Ctrl-C, never retried."""

    def __init__(self) -> None:
        super().__init__(description="interrupted (Ctrl-C)", allow_retries=False)


_INTERRUPTED = {dg.DagsterExecutionInterruptedError.__name__, Interrupted.__name__}


@contextmanager
def interrupts_not_retried() -> Iterator[None]:
    """Around the work of a step with a retry policy."""
    try:
        yield
    except (KeyboardInterrupt, dg.DagsterExecutionInterruptedError) as interrupt:
        raise Interrupted() from interrupt


def raise_if_interrupted(result: dg.ExecuteInProcessResult) -> None:
    for event in result.all_events:
        if not (event.is_step_failure or event.is_run_failure):
            continue
        error = getattr(event.event_specific_data, "error", None)
        if error is not None and error.cls_name in _INTERRUPTED:
            raise KeyboardInterrupt

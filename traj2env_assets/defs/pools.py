"""The Dagster concurrency pools of the Docker and LLM work, and their limits.

- ``docker_build``: one step per candidate image; ``jobs`` builds at once across runs.
- ``docker_trial``: calibration and trial steps. One at a time across runs, because each
  step already runs ``jobs`` containers side by side (a trial step's controls, a
  calibration step's probes).
- ``llm``: the proposal step. One at a time across runs, because it makes ``jobs`` calls
  at once; that keeps at most ``jobs`` calls in flight, which bounds the spend cap's
  overshoot (see ``traj2env_assets.llm.ledger``).

Limits live in the instance database, so whoever launches runs sets them: the
``generate`` command before its runs, and the folder sensor on every tick, so sensor
runs get the same limits as CLI runs.
"""

from __future__ import annotations

import dagster as dg

from traj2env_assets.config import PipelineOptions

DOCKER_BUILD_POOL = "docker_build"
DOCKER_TRIAL_POOL = "docker_trial"
LLM_POOL = "llm"


def pool_limits(options: PipelineOptions) -> dict[str, int]:
    return {DOCKER_BUILD_POOL: options.jobs, DOCKER_TRIAL_POOL: 1, LLM_POOL: 1}


def apply_pool_limits(instance: dg.DagsterInstance, options: PipelineOptions) -> None:
    storage = instance.event_log_storage
    for pool, slots in pool_limits(options).items():
        if storage.get_concurrency_info(pool).slot_count != slots:
            storage.set_concurrency_slots(pool, slots)

"""Which engine errors are worth retrying: the engine was briefly unreachable or overloaded.

Anything else (a bad request, a missing image, a failed build) would fail the same way
again, so the Dagster ops turn it into a failure that is not retried.
"""

from __future__ import annotations

import requests
from docker.errors import APIError

from traj2env_assets.docker_engine.connection import EngineUnavailableError


def is_transient_engine_error(error: BaseException) -> bool:
    if isinstance(error, EngineUnavailableError | requests.exceptions.ConnectionError | requests.exceptions.Timeout):
        return True
    return isinstance(error, APIError) and error.is_server_error()

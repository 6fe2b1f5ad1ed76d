"""Check commands shared by the miners: recognise a check, read its result.

::

    from traj2env_assets.checks import recognise_check, parse_check_result

    check = recognise_check(command.command, record.files_before(i), cwd=command.cwd or "",
                            project_root=record.record.project_root)
    if check is not None:
        result = parse_check_result(check, command.output, command.exit_code)
        result.passed, result.failing_ids

Recognised: pytest (``pytest``, ``python -m pytest``, ``uv run pytest``, node ids),
``python -m unittest``, ``npm test`` / ``npm run <script>`` (and yarn/pnpm/bun; the
script is resolved from package.json in the snapshot), ``node --test``, ``tsc`` /
``npx tsc --noEmit`` (and ``tsgo``), ``eslint``, ``biome check|lint``, ``ruff check``,
``mypy``, jest, vitest, mocha, ``esbuild`` (a build that ends: no ``--serve``/``--watch``).
"""

from traj2env_assets.checks.recognise import (
    CheckCommand,
    image_argv,
    image_pythonpath,
    recognise_check,
)
from traj2env_assets.checks.results import CheckResult, parse_check_result

__all__ = [
    "CheckCommand",
    "CheckResult",
    "image_argv",
    "image_pythonpath",
    "parse_check_result",
    "recognise_check",
]

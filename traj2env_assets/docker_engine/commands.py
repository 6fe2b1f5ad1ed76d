"""The ``bases`` and ``prune`` subcommands, shared by the ``traj2env`` CLI.

``traj2env_assets.cli`` calls :func:`add_docker_commands`; the module also runs on its
own: ``python -m traj2env_assets.docker_engine.commands bases``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from traj2env_assets.docker_engine.base_images import DEBIAN_MIRROR, ensure_base_images
from traj2env_assets.docker_engine.connection import connect
from traj2env_assets.docker_engine.prune import prune


def add_docker_commands(subparsers: argparse._SubParsersAction) -> None:
    bases = subparsers.add_parser(
        "bases",
        help="make sure the base images exist: keep, pull, or build stand-ins from Debian",
    )
    bases.add_argument("--mirror", default=DEBIAN_MIRROR, help="Debian mirror for stand-ins")
    bases.set_defaults(handler=_run_bases)
    prune_parser = subparsers.add_parser(
        "prune", help="remove containers, networks, volumes and images carrying the project label"
    )
    prune_parser.add_argument("--include-bases", action="store_true", help="also remove the base-image stand-ins")
    prune_parser.set_defaults(handler=_run_prune)


def _run_bases(args: argparse.Namespace) -> int:
    for outcome in ensure_base_images(connect(), mirror=args.mirror):
        print(f"{outcome.name}: {outcome.status} ({outcome.version}, {outcome.seconds:.1f}s)")
    return 0


def _run_prune(args: argparse.Namespace) -> int:
    report = prune(connect(), include_bases=args.include_bases)
    for kind in ("containers", "networks", "volumes", "images"):
        removed = getattr(report, kind)
        print(f"{kind}: {len(removed)} removed" + (f" ({', '.join(removed)})" if removed else ""))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m traj2env_assets.docker_engine.commands")
    add_docker_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())

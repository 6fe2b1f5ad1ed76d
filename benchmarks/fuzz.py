"""Fuzz the converters and the replay's shell reader for a CPU-time budget.

Runs every target of ``traj2env_assets_tests/fuzz_targets.py`` in rounds (a fresh
random seed each round) until the budget of process CPU time is spent, then prints
examples and CPU seconds per target. Exits 1 with the shrunk failing input on the
first crash.

    python benchmarks/fuzz.py --cpu-minutes 10
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback

from traj2env_assets_tests.fuzz_targets import TARGETS, run_target

ROUND_EXAMPLES = 200


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-minutes", type=float, default=10.0)
    parser.add_argument("--targets", nargs="*", default=sorted(TARGETS), choices=sorted(TARGETS))
    args = parser.parse_args()
    budget = args.cpu_minutes * 60
    examples = dict.fromkeys(args.targets, 0)
    cpu = dict.fromkeys(args.targets, 0.0)
    started_cpu, started_wall = time.process_time(), time.monotonic()
    rounds = 0
    try:
        while time.process_time() - started_cpu < budget:
            rounds += 1
            for name in args.targets:
                seed = random.randrange(2**32)
                before = time.process_time()
                try:
                    run_target(TARGETS[name], ROUND_EXAMPLES, seed=seed)
                except Exception as exc:  # noqa: BLE001 - the crash hypothesis found, after shrinking
                    traceback.print_exc()
                    print(f"CRASH in {name} (seed {seed}): {type(exc).__name__}: {exc}", file=sys.stderr)
                    return 1
                cpu[name] += time.process_time() - before
                examples[name] += ROUND_EXAMPLES
    except KeyboardInterrupt:
        # Stopped early (Ctrl-C): the figures of the finished rounds still count.
        print("interrupted: figures of the rounds finished so far")
    print(f"{'target':28} {'examples':>10} {'cpu s':>8}")
    for name in args.targets:
        print(f"{name:28} {examples[name]:>10} {cpu[name]:>8.1f}")
    total_cpu = time.process_time() - started_cpu
    print(
        f"rounds {rounds}, examples {sum(examples.values())}, crashes 0, "
        f"CPU {total_cpu / 60:.1f} min, wall {(time.monotonic() - started_wall) / 60:.1f} min"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Mutation testing of a reference project against calibrated tests, run inside a task image.

Shared by the families that grade with hidden tests (build: every mutant of the
reference; extend: mutants of the changed lines only). Public API:

- ``generate_mutants(files, only_lines=None) -> list[Mutant]``: mutants of the Python
  files ``{relative path: source}`` made with ``ast`` (operators: arithmetic,
  comparison, boolean, constant, return_value, removed_statement), optionally only on
  the given 1-based lines per path. A ``Mutant`` (pydantic) has ``id`` (a digest of path
  and mutated source: the same mutant has the same id everywhere), ``path``, ``line``,
  ``operator``, ``description`` and the whole mutated ``source``.
- ``mutation_probe(name, mutants, test_ids, files, *, workdir, pytest_config, budget_s, droppable)
  -> Probe``: a calibration probe (``families.contract.Probe``) that writes ``files``
  (reference plus tests) into the container, checks ``test_ids`` pass (those of
  ``droppable`` that fail are left out, and named in the results), then runs every
  mutant against them with pytest and prints one machine-readable line.
- ``parse_mutation_results(probe_result, mutants) -> MutationResults | None`` and
  ``kill_rate(results) -> float | None`` (killed or timed out, over mutants run).
- ``calibration_probe(name, *, states, must_pass, must_fail, tests, targets, mutants, repeat=2)
  -> Probe`` and ``parse_calibration(probe_result, must_pass, mutants) -> Calibration | None``:
  one probe that runs the hidden tests on file states overlaid on the image's project
  (the reference twice, then e.g. a stub and the start state), keeps the tests that pass
  on every reference run and on no other state, and runs the mutants against the kept
  tests (build: the reference, stub and empty start; extend: the reference after request
  k+1 and the project after k, with mutants of the changed lines).

Results are cached by content through the calibration stage: a probe's cache key is the
image plus the whole plan, which holds every mutant's content and the tests, so an
unchanged candidate (or another with the same project, tests and image) never runs its
mutants again.
"""

from traj2env_assets.mutation.mutants import Mutant, generate_mutants
from traj2env_assets.mutation.probes import (
    Calibration,
    MutationResults,
    StateRun,
    calibration_probe,
    kill_rate,
    mutation_probe,
    parse_calibration,
    parse_mutation_results,
)

__all__ = [
    "Calibration",
    "Mutant",
    "MutationResults",
    "StateRun",
    "calibration_probe",
    "generate_mutants",
    "kill_rate",
    "mutation_probe",
    "parse_calibration",
    "parse_mutation_results",
]

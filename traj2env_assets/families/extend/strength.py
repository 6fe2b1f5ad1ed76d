"""The floor an extend task's tests must clear: they discriminate and kill mutants.

The count of new tests is not what makes a task: one test that fails on the base, passes
on the reference and catches most mutants of the changed code says more than five that
do not. The floor:

- at least ``MIN_DISCRIMINATING_TESTS`` new test, and every new test fails on the base
  (a new test passing there would give a no-op submission a share of the reward);
- the new and existing tests together kill at least ``KILL_RATE_FEW_TESTS`` (80 %) of the
  changed code's mutants when there are fewer than ``FEW_TESTS`` (5) new tests, at least
  ``KILL_RATE_MANY_TESTS`` (50 %) from 5 tests on;
- at least ``MIN_MUTANTS_RUN`` (5) mutants actually ran: with 1 test and 1 mutant a single
  kill would be 100 %, so 80 % must mean at least 4 of 5 distinct ways to break the change.

Each function returns the reason's detail when the floor is not met, None when it is.
"""

from __future__ import annotations

MIN_DISCRIMINATING_TESTS = 1
FEW_TESTS = 5
KILL_RATE_FEW_TESTS = 0.8
KILL_RATE_MANY_TESTS = 0.5
MIN_MUTANTS_RUN = 5


def no_tests(new_tests: int, origin: str) -> str | None:
    """Before any image is built: a candidate without a single new test has nothing to check."""
    if new_tests >= MIN_DISCRIMINATING_TESTS:
        return None
    return f"no new tests ({origin}); at least {MIN_DISCRIMINATING_TESTS} needed"


def not_discriminating(new_tests: int, passing_on_base: int) -> str | None:
    """Every new test must fail on the base, and there must be at least one."""
    if passing_on_base:
        return f"{passing_on_base} of {new_tests} new tests already pass on the base"
    if new_tests < MIN_DISCRIMINATING_TESTS:
        return f"{new_tests} discriminating new tests; at least {MIN_DISCRIMINATING_TESTS} needed"
    return None


def required_kill_rate(new_tests: int) -> float:
    return KILL_RATE_FEW_TESTS if new_tests < FEW_TESTS else KILL_RATE_MANY_TESTS


def too_few_mutants(mutants: int) -> str | None:
    """The changed code must offer enough mutants for a kill rate to mean anything."""
    if mutants >= MIN_MUTANTS_RUN:
        return None
    return f"the changed code has {mutants} mutants; at least {MIN_MUTANTS_RUN} needed"


def weak_kill_rate(new_tests: int, rate: float) -> str | None:
    needed = required_kill_rate(new_tests)
    if rate >= needed:
        return None
    return f"{rate:.0%} of the changed code's mutants caught (at least {needed:.0%} needed with {new_tests} new tests)"

"""The done-criterion of issue 9 through the project's trial path (real Docker engine).

One attack of every class (``ONE_PER_CLASS``; benchmarks/attack_suite.py runs the whole
catalogue) runs against each published sample task it targets (pytest: intervals,
unittest: slugify, node: wordfreq) as an agent-container control; only
/workspace crosses to a fresh verifier. Each must score exactly 0 while the reference
scores 1. Each attack that claims to fool a naive verifier must also really do so: after
it, the project's tests run plainly in an agent container (its recorded check, or pytest)
and pass, so an attack scoring 0 is the verifier's doing, not a broken attack.
"""

from __future__ import annotations

import pytest

from traj2env_assets_tests.attacks.catalogue import one_per_class
from traj2env_assets_tests.attacks.model import Attack, Runner
from traj2env_assets_tests.attacks.suite import PlainOutcome, SuiteRun

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PAIRS = [(attack, runner) for runner, attacks in one_per_class().items() for attack in attacks]
IDS = [f"{attack.name}[{runner}]" for attack, runner in PAIRS]
LIVE = [(a, r) for a, r in PAIRS if a.fools_plain_run]


@pytest.mark.parametrize("runner", list(Runner))
def test_reference_scores_one(suite_run: SuiteRun, runner: Runner) -> None:
    reference = suite_run.references[runner]
    reward = reference.reward
    assert reward == 1.0, f"{reference.verdict}\n{reference.test_output_tail}"


@pytest.mark.parametrize(("attack", "runner"), PAIRS, ids=IDS)
def test_attack_scores_zero(suite_run: SuiteRun, attack: Attack, runner: Runner) -> None:
    outcome = suite_run.outcome(attack.name, runner)
    reward = outcome.reward
    assert reward == 0.0, outcome.explain()


@pytest.mark.parametrize(("attack", "runner"), LIVE, ids=[f"{a.name}[{r}]" for a, r in LIVE])
def test_attack_fools_a_plain_test_run(plain_runs: list[PlainOutcome], attack: Attack, runner: Runner) -> None:
    run = next(p for p in plain_runs if p.attack == attack.name and p.runner is runner)
    assert run.agent.exit_code == 0, run.agent.output_tail
    assert run.fooled, f"no plain run passed after {attack.name}:\n{run.explain()}"

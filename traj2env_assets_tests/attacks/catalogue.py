"""The attack suite of issue 9: every submission that must score 0 on the sample tasks.

``ATTACKS`` holds them all; each names its class (:class:`AttackClass`) and the runners it
targets. ``python -m traj2env_assets_tests.attacks.catalogue`` lists them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from traj2env_assets_tests.attacks.channel import CHANNEL_ATTACKS
from traj2env_assets_tests.attacks.edits import EDIT_ATTACKS
from traj2env_assets_tests.attacks.in_process import IN_PROCESS_ATTACKS
from traj2env_assets_tests.attacks.model import Attack, AttackClass, Runner

ATTACKS: tuple[Attack, ...] = (*EDIT_ATTACKS, *IN_PROCESS_ATTACKS, *CHANNEL_ATTACKS)
BY_NAME: dict[str, Attack] = {attack.name: attack for attack in ATTACKS}

# At least one attack of every class on every runner it targets, favouring the attacks
# Harbor's own plumbing could change (log mounts, separate verifier, artifact copy). CI runs
# these through the trial path, and those of ``HARBOR_PLUMBING_CLASSES`` through ``harbor
# run``; benchmarks/attack_suite.py runs the whole catalogue, and with ``--harbor`` these
# through ``harbor run``.
ONE_PER_CLASS: dict[Runner, tuple[str, ...]] = {
    Runner.PYTEST: (
        "assert_true_keeps_names",
        "testreport_forgery_workspace_only",
        "atexit_rewrites_results",
        "shadow_pdb",
        "escape_chain_to_forged_test",
        "always_equal_subclass",
        "agent_plants_verifier_files",
        "agent_writes_reward_files",
        "daemon_overwrites_reward",
        "fake_module_under_test",
        "exit_zero_at_import",
        "skip_failing_tests",
        "host_mount_setuid_shell",
    ),
    Runner.UNITTEST: (
        "assert_true_keeps_names",
        "init_subclass_swaps_test_methods",
        "assert_equal_noop",
        "results_handle_wrapped",
        "shadow_xml_package",
        "escape_chain_test_directory",
        "returns_mock_any",
        "runtime_overwrites_verifier_files",
        "agent_writes_reward_files",
        "fake_unittest_in_sys_modules",
        "exit_zero_after_run",
        "expected_failure_or_todo",
        "host_mount_links_out",
    ),
    Runner.NODE: (
        "expect_buggy_output",
        "node_child_stdout_rewrite",
        "node_assert_noop",
        "node_forged_v8_events",
        "node_exit_swaps_results",
        "node_modules_shims",
        "escape_through_proc_self_cwd",
        "agent_plants_verifier_files",
        "agent_writes_reward_files",
        "daemon_overwrites_reward",
        "exit_zero_at_import",
        "skip_failing_tests",
        "host_mount_setuid_shell",
        "host_mount_links_out",
    ),
}


def by_runner(attacks: Iterable[Attack]) -> dict[Runner, list[Attack]]:
    """Each attack under every runner it targets."""
    return {runner: [a for a in attacks if runner in a.runners] for runner in Runner}


def one_per_class() -> dict[Runner, list[Attack]]:
    return {runner: [BY_NAME[name] for name in names] for runner, names in ONE_PER_CLASS.items()}


# The classes whose outcome Harbor's own plumbing decides (its log mounts, its separate
# verifier, its copy of the artifact, how it reads the verifier's exit): CI runs these
# through ``harbor run`` as well; the trial path runs every class of ``ONE_PER_CLASS``.
HARBOR_PLUMBING_CLASSES = frozenset(
    {
        AttackClass.SYMLINK_ESCAPE,
        AttackClass.VERIFIER_TAMPER,
        AttackClass.REWARD_FILE,
        AttackClass.HOST_MOUNT,
        AttackClass.EXIT_CODE,
    }
)


def through_harbor() -> dict[Runner, list[Attack]]:
    return {
        runner: [attack for attack in attacks if attack.attack_class in HARBOR_PLUMBING_CLASSES]
        for runner, attacks in one_per_class().items()
    }


_duplicates = [name for name, count in Counter(a.name for a in ATTACKS).items() if count > 1]
assert not _duplicates, f"attack names must be unique: {_duplicates}"


if __name__ == "__main__":
    for attack in ATTACKS:
        print(f"{attack.name:<40} {attack.attack_class:<30} {','.join(attack.runners)}")
    print(f"{len(ATTACKS)} attacks, {len({a.attack_class for a in ATTACKS})} classes")

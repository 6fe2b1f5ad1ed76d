"""The attack suite of issue 9: every submission that must score 0 on the sample tasks.

``ATTACKS`` holds them all; each names its class (:class:`AttackClass`) and the runners it
targets. ``python -m traj2env_assets_tests.attacks.catalogue`` lists them.
"""

from __future__ import annotations

from collections import Counter

from traj2env_assets_tests.attacks.channel import CHANNEL_ATTACKS
from traj2env_assets_tests.attacks.edits import EDIT_ATTACKS
from traj2env_assets_tests.attacks.in_process import IN_PROCESS_ATTACKS
from traj2env_assets_tests.attacks.model import Attack

ATTACKS: tuple[Attack, ...] = (*EDIT_ATTACKS, *IN_PROCESS_ATTACKS, *CHANNEL_ATTACKS)
BY_NAME: dict[str, Attack] = {attack.name: attack for attack in ATTACKS}

_duplicates = [name for name, count in Counter(a.name for a in ATTACKS).items() if count > 1]
assert not _duplicates, f"attack names must be unique: {_duplicates}"


if __name__ == "__main__":
    for attack in ATTACKS:
        print(f"{attack.name:<40} {attack.attack_class:<30} {','.join(attack.runners)}")
    print(f"{len(ATTACKS)} attacks, {len({a.attack_class for a in ATTACKS})} classes")

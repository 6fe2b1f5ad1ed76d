"""The extend family: the next user request on top of the project the previous one left."""

from traj2env_assets.families.extend.family import ExtendFamily

__all__ = ["ExtendFamily"]

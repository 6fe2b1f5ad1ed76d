"""The one partitioning of every stage: one partition per trajectory file."""

import dagster as dg

TRAJECTORIES = "trajectories"
"""The partitions definition's name (``trajectories.name``, which Dagster types optional)."""
trajectories = dg.DynamicPartitionsDefinition(name=TRAJECTORIES)

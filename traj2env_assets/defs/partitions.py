"""The one partitioning of every stage (one partition per trajectory file), and the cheap stages' backfill policy."""

import dagster as dg

TRAJECTORIES = "trajectories"
"""The partitions definition's name (``trajectories.name``, which Dagster types optional)."""
trajectories = dg.DynamicPartitionsDefinition(name=TRAJECTORIES)

# Cheap stages run a whole batch of partitions in one run (dagster.md §1.7); metadata
# and data versions are recorded per partition so a range run still shows each
# trajectory's own figures.
CHEAP_STAGE_POLICY = dg.BackfillPolicy.single_run()

"""The one partitioning of every stage: one partition per trajectory file."""

import dagster as dg

trajectories = dg.DynamicPartitionsDefinition(name="trajectories")

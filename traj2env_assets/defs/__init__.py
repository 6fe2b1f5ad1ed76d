"""The Dagster glue: assets, sensors and resources that wire the domain core."""

import warnings

import dagster as dg

# backfill_policy is a beta parameter in 1.13; the single-run policy for cheap stages is deliberate.
warnings.filterwarnings("ignore", category=dg.BetaWarning)

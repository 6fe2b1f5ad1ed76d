"""The Dagster glue: assets, sensors and resources that wire the domain core."""

import warnings

import dagster as dg

# backfill_policy is a beta parameter in 1.13; the single-run policy for cheap stages is deliberate.
warnings.filterwarnings("ignore", category=dg.BetaWarning)
# One run of the whole graph mixes the cheap stages' single-run policy with the Docker
# stages' one-partition-per-run policy; Dagster then uses the stricter one for
# backfills of such a job, which is what we want.
warnings.filterwarnings("ignore", message="Asset job .* materializes assets with varying BackfillPolicies")

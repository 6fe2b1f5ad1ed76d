"""Export the Harbor dataset as a Trajectory platform spec (seed 000, "bring your spec").

No Dagster here. ``layout`` owns the spec's file layout; ``task_index`` the per-task
settings the harness reads; ``harness`` runs inside the harness image for one task;
``wheelhouse`` downloads the image's Python packages on the host; ``export`` writes
the spec directory; ``push`` builds ``BenchmarkSpec``/``TaskSpec``s and uploads them.
"""

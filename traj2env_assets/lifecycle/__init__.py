"""What every candidate stage shares, for every family (no Dagster here).

The candidate stages themselves are folders under ``traj2env_assets/stages/``
(``candidates``, ``proposals``, ``images``, ``calibration``, ``trials``, ``publish``);
they all read and write a candidate through these modules:

``status`` holds the one status model per candidate (``status.json``: how far it got,
or which stage dropped it and why); ``duplicates`` drops a candidate whose work another
claimed first. A candidate's task spec, secrets redacted, is rebuilt by
``traj2env_assets.stages.task_specs`` (it reads the convert and replay stages' records).
Docker stages are split into a cheap ``plan_*`` (decides what is cached, needs no
build or container) and a per-candidate function that does the Docker work, so the
Dagster layer can run one op per candidate and none at all on a warm rerun.
"""

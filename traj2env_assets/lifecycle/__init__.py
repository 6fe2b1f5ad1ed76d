"""One candidate lifecycle for every family (no Dagster here).

Stages, each a module with the functions the Dagster assets call:

- ``mining``: a family mines a trajectory's replay record (``candidates/<family>/<key>/``);
- ``proposals``: the optional LLM proposal, cached and budgeted;
- ``images``: the Harbor task staged privately (secrets redacted), and its environment image;
- ``calibration``: the family's probes in the image, judged by the family;
- ``trials``: the family's control matrix, networking off;
- ``publishing``: staged task → ``<destination>/<task id>/``.

``status`` holds the one status model per candidate and the file layout; ``tasks``
rebuilds a candidate's task spec, secrets redacted (``traj2env_assets.harbor.secrets``);
``checks`` finds orphaned staging directories.
Docker stages are split into a cheap ``plan_*`` (decides what is cached, needs no
build or container) and a per-candidate function that does the Docker work, so the
Dagster layer can run one op per candidate and none at all on a warm rerun.
"""

"""Everything that touches Docker, in one place (no Dagster here).

- ``engine.DockerEngine``: the facade the stages use (bases, build, trials, prune);
  ``traj2env_assets.defs.docker.DockerEngineResource`` wraps it as resource
  ``docker_engine``.
- ``base_images``: public base names (``python:3.13-slim``, ``node:20-slim``) kept,
  pulled, or built as honest stand-ins from Debian trixie and ``docker import``-ed.
- ``image_build``: a build context → an image tagged by its content hash (BuildKit via
  ``docker buildx build``); ``ImageBuildFailedError.reason == "image_build_failed"``.
- ``trial``: one control in a network-less, capped agent container, the verdict in a
  fresh verifier from the pristine image; ``run_matrix`` runs several, in parallel.
- ``controls``: ``reference``, ``noop``, ``forge_reward``, ``pytest_hook``,
  ``tests_edit``.
- ``sandbox``: the container primitives (limits, exec deadline, copy in/out, removal).
- ``prune`` / ``commands``: cleanup by label; the ``bases`` and ``prune`` subcommands.
"""

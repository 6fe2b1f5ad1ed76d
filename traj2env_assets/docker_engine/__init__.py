"""The Docker plumbing, in one place (no Dagster here). Verification, harbor, families and
lifecycle build on it, never the reverse: from the rest of the package it imports only
``run_locks`` and ``conventions`` (standard library only), as ``test_import_boundary.py`` checks.

- ``engine.DockerEngine``: the facade the stages use (bases, build, prune, the settings
  of a trial's containers); ``traj2env_assets.defs.docker.DockerEngineResource`` wraps
  it as resource ``docker_engine``.
- ``connection``: the client, the platform, whether an image is present.
- ``base_images``: public base names (``python:3.13-slim``, ``node:20-slim``: see ``conventions``) kept,
  pulled, or built as honest stand-ins from Debian trixie and ``docker import``-ed.
- ``image_build``: a build context → an image tagged by its content hash (BuildKit via
  ``docker buildx build``); ``ImageBuildFailedError.reason == "image_build_failed"``.
- ``sandbox``: the container primitives (limits, exec deadline, copy in/out, removal).
- ``labels``, ``prune``, ``reap``, ``errors`` / ``commands``: the project's labels,
  cleanup by label, containers of dead runs, engine errors; the ``bases`` and ``prune``
  subcommands.

Trials (controls, the trial matrix, the verifier phase) are ``traj2env_assets.verification``.
"""

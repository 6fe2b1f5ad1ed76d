"""Verification: what a trial matrix plays against a task and how its verdict is read.

- ``controls``: the standing controls (reference, noop and the tamper attempts); their
  in-container payloads are real files in ``control_payloads/``.
- ``trial``: one control in a network-less, capped agent container, the verdict in a
  fresh verifier from the pristine image; ``run_matrix`` runs several, in parallel.
- ``verifier``: the verifier phase (``tests/test.sh`` in a fresh container), shared by
  the trial matrix and the Trajectory harness.
- ``verifier_files/``: the helpers published beside ``tests/test.sh`` in every task
  (verdicts, test runners' reporters, the static tamper checks, the qa grader).

The Docker plumbing it runs on is ``traj2env_assets.docker_engine``, which imports
nothing from here.
"""

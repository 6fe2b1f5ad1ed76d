"""The behaviour gate: verdicts that solution code cannot reach.

The tests of a Python task import solution code, so whatever the test process reports can
be forged by it. The gate judges behaviour somewhere else. At calibration
(:mod:`~traj2env_assets.stages.calibration.gate_probe`), the reference runs under the task's tests with a
recorder that keeps every call test code makes into solution code, as plain data; each
test's calls are also perturbed into generalisation cases the agent never sees; a worker
process answers every case on the reference (twice) and on the code before the change,
and :mod:`~traj2env_assets.stages.calibration.gate_judge` keeps the cases that are deterministic, reward
work (no degenerate submission answers them) and, for the perturbed ones, stay in the
domain the tests exercise. In the verifier, the same worker answers the cases on the
submission as the unprivileged user ``solver``, who cannot read the tests, the expected
answers or anything root keeps; root compares the answers (plain data, never live
objects) with the reference's. A covered test passes only when the gate says so as well.

The worker and the probe run inside task images and use only the standard library (and
pytest): ``runtime/gate_worker.py`` and ``runtime/gate_probe.py``.
"""

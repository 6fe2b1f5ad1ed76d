"""The build family: the Python project a session's first request built, as a task graded by
hidden tests (the fraction that pass).

``candidates`` mines the project where the first request ends; ``surface`` reads its
public surface with ``ast`` (contract, stub); ``proposal`` is the ``llm`` mode's reply
and prompt size; ``task`` makes the Harbor ``TaskSpec``; ``controls`` plays the stub and
every tamper control on top of it; ``family`` is the family contract (calibration and
mutation testing through ``traj2env_assets.mutation``).
"""

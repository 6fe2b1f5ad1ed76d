"""The Harbor task writer: a ``TaskSpec`` in, a Harbor (0.25, 0.26) task directory out.

- ``task_spec``: what a family provides (project files, fix, tracked tests, base image,
  dependency lines, timeouts, provenance).
- ``writer.write_task``: writes ``task.toml``, ``instruction.md``, ``environment/``,
  ``solution/solve.sh`` and ``tests/test.sh`` atomically.
- ``task_toml`` / ``scripts``: the task.toml model and the generated scripts.
- ``secrets``: detect-secrets over every file of a task; redacts a spec before it is staged.
- ``validation`` and ``no_network_environment`` import the ``harbor`` package (a dev
  extra): Harbor's own checks, and the environment that runs ``no-network`` tasks on an
  engine without a registry.
"""

"""The repair family: a check that failed, then passed after file edits and nothing else.

No LLM. ``candidates`` mines fail→pass pairs from a replay record; ``check_config``
rejects fixes that touch the check's own configuration or tests; ``task`` turns a
candidate into a Harbor ``TaskSpec``; ``stage`` runs the image, calibration and trial
stages over the workspace.
"""

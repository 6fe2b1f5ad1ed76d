"""The repair family: a check that failed, then passed after file edits and nothing else.

No LLM. ``candidates`` mines fail→pass pairs from a replay record; ``check_config``
rejects fixes that touch the check's own configuration or tests; ``task`` turns a
candidate into a Harbor ``TaskSpec``; ``family`` is the family contract (calibration:
the recorded check fails in the image as recorded; the standing control matrix).
"""

"""Honest, independently written solutions of the sample tasks (two per task).

Each ``<task>/<variant>/`` folder holds only the files the solution writes, at their paths
relative to ``/workspace``. They measure the verifier's false positives: every one is a
correct solution that differs from the reference, so it must score full reward.
"""

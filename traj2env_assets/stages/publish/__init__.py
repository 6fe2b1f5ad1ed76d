"""Stage 9, publish: a staged task whose trials passed → ``<destination>/<task id>/``."""

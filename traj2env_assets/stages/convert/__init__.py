"""Stage 1, convert: a registered source log → a validated ATIF trajectory under ``conversion/<key>/``."""

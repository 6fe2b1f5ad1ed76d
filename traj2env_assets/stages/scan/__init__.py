"""Stage 2, scan: the atif-scan gate over each converted trajectory (``scan/<key>/verdict.json``)."""

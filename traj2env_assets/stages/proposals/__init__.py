"""Stage 5, proposals: the optional model call per candidate, cached and budgeted."""

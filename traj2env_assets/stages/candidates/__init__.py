"""Stage 4, candidates: each family mines the replay record (``candidates/<family>/<key>/``)."""

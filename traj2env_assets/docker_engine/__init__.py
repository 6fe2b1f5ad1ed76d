"""Everything that touches Docker: base images, task image builds, trials, prune."""

"""Stage 8, trials: the family's control matrix, networking off."""

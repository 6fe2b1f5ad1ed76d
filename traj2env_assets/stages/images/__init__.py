"""Stage 6, images: the Harbor task staged privately (secrets redacted), and its environment image."""

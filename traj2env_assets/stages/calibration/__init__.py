"""Stage 7, calibration: the family's probes in the image, judged by the family."""

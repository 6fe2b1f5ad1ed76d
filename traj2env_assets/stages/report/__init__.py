"""Stage 10, report: ``report.json`` and the funnel over every trajectory of the run."""

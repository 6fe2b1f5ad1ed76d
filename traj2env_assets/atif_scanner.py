"""What the installed atif-scan offers (it is optional: without it the scan gate never runs).
A ground module: the run configuration checks finding ids against it, the scan gate runs it."""

from __future__ import annotations

import importlib.util


def scanner_installed() -> bool:
    return importlib.util.find_spec("atif_scan") is not None


def known_finding_ids() -> frozenset[str] | None:
    """Every check id the scanner can report, or None when it is not installed."""
    if not scanner_installed():
        return None
    from atif_scan import builtin_detectors

    return frozenset(detector.spec.id for detector in builtin_detectors())

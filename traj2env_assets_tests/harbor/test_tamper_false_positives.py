"""The tamper check reports nothing on honest code (the sample projects and, where
``../shared/fixtures/real`` exists, the code replay rebuilds from the real agent logs) and
cannot be stalled by hostile input;
benchmarks/tamper_false_positives.py prints the figures."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from traj2env_assets_tests.corpus import corpus_folder

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "tamper_false_positives.py"


def load_benchmark() -> ModuleType:
    # benchmarks/ is not a package; load the script by path.
    spec = importlib.util.spec_from_file_location("tamper_false_positives", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_no_findings_on_sample_projects_or_real_session_code(tmp_path: Path) -> None:
    results = load_benchmark().corpora(tmp_path)
    scanned = {
        (corpus, script): figures.files_scanned
        for corpus, by_script in results.items()
        for script, figures in by_script.items()
    }
    # Both scripts really scanned code in each corpus (the real logs hold Python and TypeScript).
    corpora = {"samples"} | ({"real"} if corpus_folder("real") is not None else set())
    assert set(results) == corpora
    assert all(count > 0 for count in scanned.values()) and len(scanned) == 2 * len(corpora), scanned
    findings = [
        finding for by_script in results.values() for figures in by_script.values() for finding in figures.findings
    ]
    assert findings == []


@pytest.mark.slow
def test_hostile_inputs_are_scanned_without_stalling(tmp_path: Path) -> None:
    # Each run has a 300 s subprocess timeout; the figures are seconds (see --hostile).
    seconds = load_benchmark().hostile_seconds(tmp_path)
    assert set(seconds) == set(load_benchmark().hostile_sources())

"""The traj2env command: seed-shaped config, option validation, an in-process run that writes report.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from traj2env_assets.cli import main
from traj2env_assets.config import ConfigError, RunSettings, load_run_config
from traj2env_assets_tests.conftest import REAL_FIXTURES


def _write_config(tmp_path: Path, source: Path, options: str = "families: [repair]") -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(
        "source:\n  kind: trajectory\n  path: " + str(source) + "\n  format: auto\n"
        "pipeline:\n  name: trajectory_to_env\n  options:\n    " + options + "\n"
        "output:\n  destination: " + str(tmp_path / "tasks") + "\n  org: local\n  dataset_name: trajectory-tasks\n"
    )
    return config


def test_comma_string_families_and_overrides(tmp_path: Path) -> None:
    config = load_run_config(_write_config(tmp_path, tmp_path), ["families=repair, repair", "jobs=2", "scan=false"], "openai/x")
    options = config.pipeline.options
    assert options.families == ["repair"]
    assert (options.jobs, options.scan, options.llm) == (2, False, "openai/x")


@pytest.mark.parametrize(
    ("families", "message"),
    [("build", "family 'build' is not implemented yet; implemented families: repair"),
     ("repair,nope", "unknown family 'nope'; implemented families: repair")],
)
def test_a_family_that_is_not_implemented_is_an_error_naming_the_implemented_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], families: str, message: str
) -> None:
    config = _write_config(tmp_path, tmp_path)
    with pytest.raises(ConfigError, match=message):
        load_run_config(config, [f"families={families}"])
    assert main(["generate", "--config", str(config), "--pipeline-opt", f"families={families}"]) == 2
    assert message in " ".join(capsys.readouterr().err.split())


def test_workspace_root_moves_every_output_path_and_only_those(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("source: {path: logs}\n")
    monkeypatch.chdir(tmp_path)
    settings = RunSettings.resolve(load_run_config(config), tmp_path / "elsewhere")
    root = (tmp_path / "elsewhere").resolve()
    assert settings.workspace == root
    assert settings.output.destination == root / "trajectory-tasks"
    assert settings.options.llm_cache_dir == root / "cache" / "trajectory_to_env" / "llm"
    assert settings.source.path == tmp_path.resolve() / "logs"


def test_unknown_option_names_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_run_config(_write_config(tmp_path, tmp_path), ["familes=repair"])
    assert "familes" in str(error.value) and "families" in str(error.value) and "max_llm_spend_usd" in str(error.value)
    with pytest.raises(ConfigError, match="unknown pipeline option"):
        load_run_config(_write_config(tmp_path, tmp_path, "retries: 3"))


def test_generate_runs_the_graph_and_prints_the_report_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(REAL_FIXTURES / "session-share" / "edit-tool-variants.jsonl", source)
    shutil.copy(REAL_FIXTURES / "atif-make-fixtures" / "atbench.json", source)
    (source / "empty.jsonl").write_text("")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    code = main(
        ["generate", "--config", str(_write_config(tmp_path, source)), "--workspace", str(tmp_path / "ws"),
         "--pipeline-opt", "scan=false"]
    )
    assert code == 0
    report_path = tmp_path / "tasks" / "report.json"
    assert f"report: {report_path}" in capsys.readouterr().out
    report = json.loads(report_path.read_text())
    assert report["totals"] == {"inputs": 3, "converted": 1, "skipped": 2, "candidates": 0, "kept": 0, "dropped": 0}
    assert report["scan_outcomes"] == {"disabled": 1}
    assert report["totals_by_reason"] == {"empty_file": 1, "unrecognised_format": 1}


def test_generate_rejects_unknown_option_with_exit_code_2(tmp_path: Path) -> None:
    assert main(["generate", "--config", str(_write_config(tmp_path, tmp_path)), "--pipeline-opt", "nope=1"]) == 2

"""The traj2env command: seed-shaped config, option validation, an in-process run that writes report.json."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest
import yaml

from traj2env_assets.cli import build_parser, dagster_home, dagster_instance, generate_settings, main
from traj2env_assets.config import ConfigError, RunSettings, load_run_config
from traj2env_assets_tests.formats import real_shapes


def _write_config(tmp_path: Path, source: Path | str, options: str = "families: [repair]") -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(
        "source:\n  kind: trajectory\n  path: " + str(source) + "\n  format: auto\n"
        "pipeline:\n  name: trajectory_to_env\n  options:\n    " + options + "\n"
        "output:\n  destination: " + str(tmp_path / "tasks") + "\n  org: local\n  dataset_name: trajectory-tasks\n"
    )
    return config


def test_comma_string_families_and_overrides(tmp_path: Path) -> None:
    config = load_run_config(
        _write_config(tmp_path, tmp_path), ["families=repair, repair", "jobs=2", "scan=false"], "openai/x"
    )
    options = config.pipeline.options
    assert options.families == ["repair"]
    assert (options.jobs, options.scan, options.llm) == (2, False, "openai/x")


@pytest.mark.parametrize(
    ("families", "message"),
    [("repair,nope", "unknown family 'nope'; implemented families: repair, build, extend, qa")],
)
def test_a_family_that_is_not_implemented_is_an_error_naming_the_implemented_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], families: str, message: str
) -> None:
    config = _write_config(tmp_path, tmp_path)
    with pytest.raises(ConfigError, match=message):
        load_run_config(config, [f"families={families}"])
    assert main(["generate", "--config", str(config), "--pipeline-opt", f"families={families}"]) == 2
    assert message in " ".join(capsys.readouterr().err.split())


def test_workspace_root_moves_the_default_outputs_and_only_those(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("source: {path: logs}\n")
    monkeypatch.chdir(tmp_path)
    settings = RunSettings.resolve(load_run_config(config), tmp_path / "elsewhere")
    root = (tmp_path / "elsewhere").resolve()
    assert settings.workspace == root
    assert settings.output.destination == root / "trajectory-tasks"
    assert settings.options.llm_cache_dir == root / "cache" / "trajectory_to_env" / "llm"
    assert settings.source.path == tmp_path.resolve() / "logs"


def test_the_notes_quickstart_paths_resolve_where_the_user_runs_it_never_doubled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The product notes' config, run from the folder that holds workspace/: the tasks land
    in ./workspace/trajectory-tasks, where the notes' `harbor run -p` looks."""
    config = tmp_path / "trajectory-to-env.yaml"
    config.write_text(
        "source: {kind: trajectory, path: workspace/trajectories}\n"
        "pipeline: {name: trajectory_to_env, options: {llm_cache_dir: workspace/cache/trajectory_to_env/llm}}\n"
        "output: {destination: workspace/trajectory-tasks}\n"
    )
    monkeypatch.chdir(tmp_path)
    settings = RunSettings.resolve(load_run_config(config), Path("workspace"))
    here = tmp_path.resolve()
    assert settings.output.destination == here / "workspace" / "trajectory-tasks"
    assert settings.options.llm_cache_dir == here / "workspace" / "cache" / "trajectory_to_env" / "llm"
    assert settings.source.path == here / "workspace" / "trajectories"


@pytest.mark.parametrize(
    ("source", "message"),
    [("missing-folder", "is not a folder"), ("hf://datasets/org/sessions", "is a URL; only local folders are read")],
)
def test_a_source_that_is_no_local_folder_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, message: str
) -> None:
    config = _write_config(tmp_path, source)
    assert main(["generate", "--config", str(config), "--workspace", str(tmp_path / "ws")]) == 2
    assert message in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "ws").exists(), "nothing ran"


def test_max_spend_usd_overrides_the_config(tmp_path: Path) -> None:
    config = _write_config(tmp_path, tmp_path, "max_llm_spend_usd: 5")
    args = build_parser().parse_args(["generate", "--config", str(config), "--max-spend-usd", "0.25"])
    assert generate_settings(args).options.max_llm_spend_usd == 0.25
    args = build_parser().parse_args(["generate", "--config", str(config)])
    assert generate_settings(args).options.max_llm_spend_usd == 5
    with pytest.raises(ConfigError, match="max_llm_spend_usd"):
        generate_settings(build_parser().parse_args(["generate", "--config", str(config), "--max-spend-usd", "-1"]))


def test_unknown_option_names_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_run_config(_write_config(tmp_path, tmp_path), ["familes=repair"])
    assert "familes" in str(error.value) and "families" in str(error.value) and "max_llm_spend_usd" in str(error.value)
    with pytest.raises(ConfigError, match="unknown pipeline option"):
        load_run_config(_write_config(tmp_path, tmp_path, "retries: 3"))


def test_generate_runs_the_graph_shows_stage_counts_and_ends_with_the_funnel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    real_shapes.claude_edit_variants(source / "edit-tool-variants.jsonl")
    # A dataset export, not an agent log (shaped like ATBench rows).
    (source / "atbench.json").write_text(
        json.dumps([{"id": "r1", "trajectory": [{"role": "user", "content": "hi"}], "label": "safe"}])
    )
    (source / "empty.jsonl").write_text("")
    config = _write_config(tmp_path, source)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(
            ["generate", "--config", str(config), "--workspace", str(tmp_path / "ws"), "--pipeline-opt", "scan=false"]
        )
    assert code == 0
    out, err = capsys.readouterr()
    report_path = tmp_path / "tasks" / "report.json"
    assert f"report: {report_path}" in out
    report = json.loads(report_path.read_text())
    assert report["totals"] == {"inputs": 3, "converted": 1, "skipped": 2, "candidates": 0, "kept": 0, "dropped": 0}
    assert report["scan_outcomes"] == {"disabled": 1}
    assert report["totals_by_reason"] == {"empty_file": 1, "unrecognised_format": 1}
    # Progress: counts per stage, not partition names.
    assert "converted 1  candidates 0  built 0  tried 0  published 0" in err
    assert report["inputs"][0]["partition_key"] not in err
    # The end: the funnel per family and the top skip reasons.
    funnel_rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip() for line in out.splitlines() if line.count("│") == 3
    }
    assert funnel_rows == {
        "inputs": "3",
        "converted": "1",
        "passed_gate": "1",
        "candidates": "0",
        "distinct": "0",
        "built": "0",
        "calibrated": "0",
        "tried": "0",
        "published": "0",
        "accepted": "0",
        "solved_in_rollouts": "0",
    }
    assert "top skip reasons" in out and "unrecognised_format" in out and "no_candidate" in out
    assert (tmp_path / "tasks" / "funnel.csv").read_text().startswith("stage,repair\ninputs,3\n")
    # Dagster: no banner, no missing-config warning, its instance under the workspace.
    assert "Telemetry" not in err and "Welcome to Dagster" not in err
    assert not [w for w in caught if "dagster.yaml" in str(w.message)]
    assert (tmp_path / "ws" / ".dagster" / "dagster.yaml").is_file()
    assert any((tmp_path / "ws" / ".dagster").rglob("*.db"))
    # Only the selected family's candidates asset ran: the others' steps would record nothing.
    with dagster_instance(tmp_path / "ws") as instance:
        materialized = {key.to_user_string() for key in instance.get_asset_keys()}
    assert "candidates/repair" in materialized and "replay" in materialized
    assert not {"candidates/build", "candidates/extend", "candidates/qa"} & materialized
    assert list(cwd.iterdir()) == []
    assert "DAGSTER_HOME" not in os.environ

    # The Harbor dataset's manifest and splits are written beside the tasks on every run.
    manifest = json.loads((tmp_path / "tasks" / "dataset.json").read_text())
    assert (manifest["tasks"], manifest["test_fraction"]) == ([], 0.15)
    assert json.loads((tmp_path / "tasks" / "splits.json").read_text())["sources"] == {}


def test_dagster_home_is_dagster_home_when_set_and_keeps_its_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n# mine\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    assert dagster_home(tmp_path / "ws") == home
    assert (home / "dagster.yaml").read_text().endswith("# mine\n")
    assert not (tmp_path / "ws").exists()
    monkeypatch.delenv("DAGSTER_HOME")
    created = dagster_home(tmp_path / "ws")
    assert created == (tmp_path / "ws" / ".dagster").resolve()
    assert yaml.safe_load((created / "dagster.yaml").read_text())["telemetry"] == {"enabled": False}


def test_generate_rejects_unknown_option_with_exit_code_2(tmp_path: Path) -> None:
    assert main(["generate", "--config", str(_write_config(tmp_path, tmp_path)), "--pipeline-opt", "nope=1"]) == 2


def test_export_without_published_tasks_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--dataset", str(tmp_path / "missing"), "--out", str(tmp_path / "spec")]) == 2
    assert "is not a directory of published tasks" in " ".join(capsys.readouterr().err.split())
    (tmp_path / "empty").mkdir()
    assert main(["export", "--dataset", str(tmp_path / "empty"), "--out", str(tmp_path / "spec")]) == 2
    assert "has no published tasks" in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "spec").exists()

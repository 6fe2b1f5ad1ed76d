"""Yield on a folder of agent logs: where candidates die, and one example of each cause.

    .venv/bin/python benchmarks/yield.py DIR [--families repair,build,extend] [--workspace W]
        [--repositories auto|PATH,...]
    .venv/bin/python benchmarks/yield.py --report W/trajectory-tasks/report.json

Runs ``traj2env generate`` on DIR (a config written to a temporary file; the workspace is
W, or a new temporary folder that is kept and printed), or reads the report.json of an
earlier run. Then prints, from that report (``traj2env_assets/stages/report/report.py`` owns its format):

- the funnel per family: candidates found, then how many passed each lifecycle stage (candidates,
  proposals, images, calibration, trials, publish);
- every drop reason, per family and stage, with its count and ONE example: the session
  file, where in it (the step/command/request numbers the candidate records) and the
  detail text, so the next cause to fix is one command away;
- the replay fidelity totals over the inputs (files lost, failed edits and unsafe paths
  by reason), each reason with the input that has most of it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from rich.console import Console, JustifyMethod
from rich.table import Table

from traj2env_assets.lifecycle.status import STAGES
from traj2env_assets.stages.report.report import CandidateRecord, InputRecord, RunReport

DEFAULT_FAMILIES = "repair,build,extend"
DESTINATION = "trajectory-tasks"
REPORT_FILE = "report.json"
# Keys of a candidate.json that say where in the session the candidate comes from.
WHERE_SUFFIXES = ("_command_index", "_step_id", "request_number")


def repositories_option(value: str | None) -> str | list[dict[str, str]] | None:
    """``--repositories``: ``auto`` or comma-separated local checkouts, as ``source.repositories``."""
    if value is None or value == "auto":
        return value
    return [{"path": str(Path(part.strip()).resolve())} for part in value.split(",") if part.strip()]


def run_generate(
    source: Path, families: list[str], workspace: Path, repositories: str | list[dict[str, str]] | None = None
) -> Path:
    """``traj2env generate`` on ``source``; returns the report.json it wrote."""
    destination = workspace / DESTINATION
    source_config: dict[str, object] = {"kind": "trajectory", "path": str(source.resolve()), "format": "auto"}
    if repositories is not None:
        source_config["repositories"] = repositories
    config = {
        "source": source_config,
        "pipeline": {"name": "trajectory_to_env", "options": {"families": families}},
        "output": {"destination": str(destination), "org": "local", "dataset_name": f"yield-{source.name}"},
    }
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="yield-", delete=False) as handle:
        yaml.safe_dump(config, handle)
    command = [
        sys.executable,
        "-m",
        "traj2env_assets.cli",
        "generate",
        "--config",
        handle.name,
        "--workspace",
        str(workspace),
    ]
    print(f"running: {' '.join(command)}", flush=True)
    completed = subprocess.run(command, check=False)
    Path(handle.name).unlink()
    if completed.returncode != 0:
        raise SystemExit(f"traj2env generate exited with {completed.returncode}")
    return destination / REPORT_FILE


def furthest_stage(candidate: CandidateRecord) -> int:
    """Index in STAGES of the last stage the candidate passed (-1: none)."""
    if candidate.reached is not None:
        return STAGES.index(candidate.reached)
    if candidate.dropped_at is not None:
        return STAGES.index(candidate.dropped_at) - 1
    # Reports written before ``reached`` existed: a published path means it went all the way.
    return len(STAGES) - 1 if candidate.published_path else 0


def funnel_table(report: RunReport, families: list[str]) -> Table:
    table = Table(title="funnel per family (candidates found, then how many passed each stage)")
    table.add_column("stage")
    for family in families:
        table.add_column(family, justify="right")
    by_family = {family: [c for c in report.candidates if c.family == family] for family in families}
    table.add_row("found", *(str(len(by_family[f])) for f in families))
    for index, stage in enumerate(STAGES):
        table.add_row(stage, *(str(sum(1 for c in by_family[f] if furthest_stage(c) >= index)) for f in families))
    return table


def _where(candidate: CandidateRecord) -> str:
    """The step/command/request numbers the candidate's own file records, if any."""
    path = candidate.evidence.get("candidate")
    if not path or not Path(path).is_file():
        return ""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    return " ".join(
        f"{key}={value}" for key, value in document.items() if key.endswith(WHERE_SUFFIXES) and value is not None
    )


@dataclass
class Reason:
    family: str
    stage: str
    reason: str
    count: int = 0
    example: tuple[str, str, str] = ("", "", "")
    keys: set[str] = field(default_factory=set)


def drop_reasons(report: RunReport) -> list[Reason]:
    """Every reason an input or candidate stopped, most frequent first, with its first example."""
    sessions = {item.partition_key: item.path for item in report.inputs}
    found: dict[tuple[str, str, str], Reason] = {}

    def add(family: str, stage: str, reason: str, session: str, where: str, detail: str | None, key: str) -> None:
        entry = found.setdefault((family, stage, reason), Reason(family, stage, reason))
        if not entry.count:
            entry.example = (session, where, detail or "")
        entry.count += 1
        entry.keys.add(key)

    for rejected in report.rejected_inputs:
        add("", "input", rejected.reason, rejected.path, "", rejected.detail, rejected.path)
    for item in report.inputs:
        if item.reason:
            stage = "gate" if item.reason in ("gate", "scan_error") else "conversion"
            add("", stage, item.reason, item.path, "", item.detail, item.partition_key)
            continue
        for family, reason in item.mining_skipped.items():
            add(family, "candidates", reason, item.path, "", None, item.partition_key)
    for candidate in report.candidates:
        if candidate.reason and not candidate.kept:
            session = sessions.get(candidate.partition_key, candidate.partition_key)
            where = (
                _where(candidate)
                if not found.get((candidate.family, candidate.dropped_at or "candidates", candidate.reason))
                else ""
            )
            add(
                candidate.family,
                candidate.dropped_at or "candidates",
                candidate.reason,
                session,
                where,
                candidate.detail,
                candidate.partition_key,
            )
    return sorted(
        found.values(), key=lambda r: (-r.count, r.family, STAGES.index(r.stage) if r.stage in STAGES else -1, r.reason)
    )


def reasons_table(reasons: list[Reason]) -> Table:
    table = Table(title="drop reasons (one example each)", show_lines=True)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("family", "left"),
        ("stage", "left"),
        ("reason", "left"),
        ("count", "right"),
        ("sessions", "right"),
        ("example", "left"),
    )
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")
    for reason in reasons:
        session, where, detail = reason.example
        example = f"{session}\n{where + chr(10) if where else ''}{detail[:400]}"
        table.add_row(
            reason.family or "(input)", reason.stage, reason.reason, str(reason.count), str(len(reason.keys)), example
        )
    return table


def fidelity_table(inputs: list[InputRecord]) -> Table:
    """files_lost, edits_failed_by_reason and unsafe_paths_by_reason summed over the inputs."""
    totals: Counter[str] = Counter()
    worst: dict[str, tuple[int, str]] = {}
    for item in inputs:
        fidelity = item.replay_fidelity
        if fidelity is None:
            continue
        figures = {"files_lost": fidelity.files_lost}
        figures |= {f"edits_failed: {reason}": n for reason, n in fidelity.edits_failed_by_reason.items()}
        figures |= {f"unsafe_paths: {reason}": n for reason, n in fidelity.unsafe_paths_by_reason.items()}
        for name, count in figures.items():
            totals[name] += count
            if count > worst.get(name, (0, ""))[0]:
                worst[name] = (count, item.path)
    table = Table(title=f"replay fidelity over {sum(1 for i in inputs if i.replay_fidelity)} replayed inputs")
    table.add_column("figure")
    table.add_column("total", justify="right")
    table.add_column("most in one input", overflow="fold")
    for name, total in sorted(totals.items(), key=lambda pair: (-pair[1], pair[0])):
        count, path = worst.get(name, (0, ""))
        table.add_row(name, str(total), f"{count} in {path}" if count else "")
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", type=Path, help="folder of agent logs to run the pipeline on")
    parser.add_argument("--families", default=DEFAULT_FAMILIES, help=f"comma-separated (default {DEFAULT_FAMILIES})")
    parser.add_argument("--workspace", type=Path, help="workspace of the run (default: a new temporary folder, kept)")
    parser.add_argument("--report", type=Path, help="read this report.json instead of running the pipeline")
    parser.add_argument(
        "--repositories",
        help="source.repositories: `auto`, or comma-separated local git checkouts of the sessions' projects",
    )
    arguments = parser.parse_args()
    families = [name.strip() for name in arguments.families.split(",") if name.strip()]
    if arguments.report is not None:
        report_path = arguments.report
    elif arguments.source is not None:
        if not arguments.source.is_dir():
            parser.error(f"{arguments.source} is not a folder")
        workspace = arguments.workspace or Path(tempfile.mkdtemp(prefix="yield-ws-"))
        report_path = run_generate(
            arguments.source, families, workspace.resolve(), repositories_option(arguments.repositories)
        )
    else:
        parser.error("give a folder of agent logs, or --report")
    report = RunReport.model_validate_json(report_path.read_text(encoding="utf-8"))
    console = Console(width=200)
    console.print(f"report: {report_path}  ({len(report.inputs)} inputs, {len(report.rejected_inputs)} rejected)")
    # The families asked for (a family with no candidate shows its zeros), then any other the run mined.
    shown = list(dict.fromkeys([*families, *(candidate.family for candidate in report.candidates)]))
    console.print(funnel_table(report, shown))
    console.print(reasons_table(drop_reasons(report)))
    console.print(fidelity_table(report.inputs))
    return 0


if __name__ == "__main__":
    sys.exit(main())

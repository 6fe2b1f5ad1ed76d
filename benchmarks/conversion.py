"""Conversion throughput vs atif-make, and Dagster's overhead over a plain loop.

Prints:
1. MB/s of our converters (``convert_source``: detection, parsing, validation with the
   ``atif`` models) over the real fixtures and over a generated corpus of 200 Claude
   Code and Codex sessions, next to atif-make's ``convert`` (detection and parsing into
   plain dataclasses, no validation) on the same files: best of REPEATS, the ratio per
   corpus and overall (atif-make has no pi reader, so pi files are ours only). The
   median ratio beside the best shows how noisy the machine was. Both are timed in
   this process's CPU seconds, not wall time: on a shared machine wall time mostly
   measures the neighbours.
2. Wall time of the cheap stages (conversion, scan gate, replay, repair mining) for 200
   partitions in ONE Dagster run (single-run backfill policy, SQLite instance) vs a plain
   Python loop over the same core functions.

Run: .venv/bin/python benchmarks/conversion.py
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
from atif_make import convert as atif_make_convert

from traj2env_assets.defs.candidates import candidates_asset
from traj2env_assets.defs.ingest import scan_verdict, trajectory_atif
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.replay import replay_record
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.families.registry import family_named
from traj2env_assets.formats.convert import convert_source
from traj2env_assets.formats.stage import convert_partition
from traj2env_assets.lifecycle.mining import mine_partition
from traj2env_assets.replay import replay_partition
from traj2env_assets.scan_gate import scan_partition
from traj2env_assets.sources import register_sources
from traj2env_assets.workspace import Workspace

REAL = Path(__file__).resolve().parent.parent / "traj2env_assets_tests" / "fixtures" / "real"
# The stages that run a whole batch of partitions in one run (single-run backfill policy).
CHEAP_STAGES = [trajectory_atif, scan_verdict, replay_record, candidates_asset(family_named("repair"))]
REPEATS = 15
TARGET_RATIO = 3.0


def generated_claude_code(path: Path, index: int, calls: int = 120) -> None:
    lines = [{"type": "user", "uuid": f"u{index}", "sessionId": f"gen-cc-{index}", "cwd": "/home/dev/p", "version": "2.1.27",
              "timestamp": "2026-03-01T10:00:00Z", "isSidechain": False, "message": {"role": "user", "content": "Build it."}}]
    for n in range(calls):
        body = f"def f{n}(x):\n    return x + {n}\n" * 20
        lines.append({"type": "assistant", "uuid": f"a{n}", "sessionId": f"gen-cc-{index}", "cwd": "/home/dev/p", "isSidechain": False,
                      "timestamp": "2026-03-01T10:00:01Z", "message": {"id": f"m{n}", "role": "assistant", "model": "claude",
                      "content": [{"type": "tool_use", "id": f"t{index}-{n}", "name": "Write", "input": {"file_path": f"/home/dev/p/m{n}.py", "content": body}}],
                      "usage": {"input_tokens": 10, "output_tokens": 20}}})
        lines.append({"type": "user", "uuid": f"r{n}", "sessionId": f"gen-cc-{index}", "cwd": "/home/dev/p", "isSidechain": False,
                      "timestamp": "2026-03-01T10:00:02Z", "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": f"t{index}-{n}", "content": "File created successfully"}]},
                      "toolUseResult": {"type": "create", "filePath": f"/home/dev/p/m{n}.py", "content": body, "originalFile": None}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def generated_codex(path: Path, index: int, calls: int = 120) -> None:
    lines = [{"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta", "payload": {"id": f"gen-codex-{index}", "cwd": "/home/dev/p", "cli_version": "0.104.0"}},
             {"timestamp": "2026-03-01T10:00:00Z", "type": "turn_context", "payload": {"cwd": "/home/dev/p", "model": "gpt"}},
             {"timestamp": "2026-03-01T10:00:00Z", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Build it."}]}}]
    for n in range(calls):
        output = "Process exited with code 0\nOutput:\n" + ("ok line\n" * 60)
        lines.append({"timestamp": "2026-03-01T10:00:01Z", "type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                      "arguments": json.dumps({"cmd": f"python -m pytest -q tests/test_{n}.py"}), "call_id": f"c{n}"}})
        lines.append({"timestamp": "2026-03-01T10:00:02Z", "type": "response_item", "payload": {"type": "function_call_output", "call_id": f"c{n}", "output": output}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def run_once(fn: Callable[[Path], object], files: list[Path]) -> float:
    """CPU seconds of one pass (both converters run in this process, single-threaded)."""
    start = time.process_time()
    for path in files:
        fn(path)
    return time.process_time() - start


def timed_pair(files: list[Path], compare: bool) -> tuple[list[float], list[float]]:
    """REPEATS timings of ours and of atif-make over the same files.

    One untimed pass of each warms the page cache and both libraries' lazy imports;
    then the two alternate within each repeat, so a noisy neighbour (a shared machine,
    two cores) slows both rather than one of them.
    """
    run_once(convert_source, files)
    if compare:
        run_once(atif_make_convert, files)
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(REPEATS):
        ours.append(run_once(convert_source, files))
        if compare:
            theirs.append(run_once(atif_make_convert, files))
    return ours, theirs


@dataclass
class Totals:
    """Megabytes and best times summed over the corpora both converters read."""

    megabytes: float = 0.0
    ours: float = 0.0
    theirs: float = 0.0


def throughput_row(label: str, files: list[Path], compare: bool, totals: Totals) -> None:
    megabytes = sum(path.stat().st_size for path in files) / 1e6
    ours, theirs = timed_pair(files, compare)
    line = f"{label:<38} {len(files):>4} files {megabytes:7.2f} MB  ours {megabytes / min(ours):7.1f} MB/s"
    if compare:
        line += (
            f"  atif-make {megabytes / min(theirs):7.1f} MB/s  ratio {min(theirs) / min(ours):5.2f}x"
            f" (median {statistics.median(theirs) / statistics.median(ours):5.2f}x)"
        )
        totals.megabytes += megabytes
        totals.ours += min(ours)
        totals.theirs += min(theirs)
    print(line, flush=True)


def dagster_overhead(corpus: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plain_ws = Workspace(root=root / "plain")
        keys = register_sources(plain_ws, corpus).new
        start = time.perf_counter()
        for key in keys:
            convert_partition(plain_ws, key)
            scan_partition(plain_ws, key)
            replay_partition(plain_ws, key)
            mine_partition(plain_ws, family_named("repair"), key)
        plain = time.perf_counter() - start

        dagster_ws = Workspace(root=root / "dagster")
        register_sources(dagster_ws, corpus)
        config = root / "config.yaml"
        config.write_text(f"source: {{path: {corpus}}}\n")
        (root / "home").mkdir()
        with dg.DagsterInstance.local_temp(str(root / "home")) as instance:
            instance.add_dynamic_partitions(trajectories.name, keys)
            start = time.perf_counter()
            result = dg.materialize(
                CHEAP_STAGES,
                resources={"pipeline": PipelineResource.from_files(config, dagster_ws.root)},
                instance=instance,
                run_config={"loggers": {"console": {"config": {"log_level": "ERROR"}}}},
                tags={"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]},
            )
            in_dagster = time.perf_counter() - start
            assert result.success
        print(
            f"cheap stages (convert, scan, replay, mine), {len(keys)} partitions: plain loop {plain:6.2f} s   one Dagster run (SQLite) "
            f"{in_dagster:6.2f} s   overhead {in_dagster / plain:4.2f}x (target < 2x)"
        )


def main() -> None:
    real_cc = sorted((REAL / "session-share").glob("*.jsonl"))
    real_codex = sorted((REAL / "localpush-codex").glob("*.jsonl"))
    real_pi = sorted((REAL / "pi-mono").glob("*.jsonl"))
    totals = Totals()
    print(f"conversion throughput (best of {REPEATS}; ratio = atif-make time / ours, target >= {TARGET_RATIO:g}x)")
    throughput_row("real Claude Code (session-share)", real_cc, True, totals)
    throughput_row("real Codex (localpush-codex)", real_codex, True, totals)
    throughput_row("real pi (pi-mono; no atif-make)", real_pi, False, totals)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        for index in range(100):
            generated_claude_code(corpus / f"cc-{index}.jsonl", index)
            generated_codex(corpus / f"codex-{index}.jsonl", index)
        files = sorted(corpus.glob("*.jsonl"))
        throughput_row("generated corpus (100 CC + 100 Codex)", files, True, totals)
        print(
            f"{'overall, where both apply':<38} {'':>10} {totals.megabytes:7.2f} MB  "
            f"ours {totals.megabytes / totals.ours:7.1f} MB/s  atif-make {totals.megabytes / totals.theirs:7.1f} MB/s  "
            f"ratio {totals.theirs / totals.ours:5.2f}x"
        )
        dagster_overhead(corpus)


if __name__ == "__main__":
    main()

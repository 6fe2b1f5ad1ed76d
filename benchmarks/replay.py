"""Replay throughput, peak RSS and snapshot storage.

    .venv/bin/python benchmarks/replay.py            # both scenarios, each in its own process
    .venv/bin/python benchmarks/replay.py --scenario real|generated

Scenarios: the largest real fixture (pi-mono/before-compaction.jsonl, converted by
traj2env's converter) and a generated ~50 MB ATIF session with 5,000 shell commands
over a 200-file project (each command preceded by a small edit). Timed: loading and
validating the ATIF JSON, replaying, writing the record. Targets for the generated
session: < 10 s and < 500 MB peak RSS on one core; stored snapshot bytes should track
the bytes changed, not commands x project size.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from atif import Trajectory

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record

REAL_FIXTURE = Path(__file__).parents[1] / "traj2env_assets_tests" / "fixtures" / "real" / "pi-mono" / "before-compaction.jsonl"
ROOT = "/bench/project"
FILES = 200
COMMANDS = 5_000


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _generated_session() -> tuple[str, int]:
    """An ATIF document (JSON text) and the number of content bytes its edits change."""
    module = "".join(f"def function_{i}(value):\n    return value * {i}  # padding padding padding\n" for i in range(300))
    steps: list[dict] = [{"step_id": 1, "source": "user", "message": "refactor the project"}]
    changed = 0

    def call(name: str, arguments: dict, content: str, extra: dict | None = None) -> None:
        call_id = f"c{len(steps)}"
        result: dict = {"source_call_id": call_id, "content": content}
        if extra:
            result["extra"] = extra
        steps.append(
            {
                "step_id": len(steps) + 1,
                "source": "agent",
                "message": "",
                "tool_calls": [{"tool_call_id": call_id, "function_name": name, "arguments": arguments}],
                "observation": {"results": [result]},
            }
        )

    for index in range(FILES):
        text = module.replace("padding", f"file{index}")
        changed += len(text)
        call("Write", {"file_path": f"{ROOT}/pkg/module_{index}.py", "content": text}, "File created successfully")
    test_output = "".join(f"tests/test_m.py::test_case_{i} PASSED\n" for i in range(225))
    for command in range(COMMANDS):
        target = command % FILES
        number = command // FILES
        old = f"return value * {number}  #"
        new = f"return value * {number} + 1  #"
        changed += len(new)
        call("Edit", {"file_path": f"{ROOT}/pkg/module_{target}.py", "old_string": old, "new_string": new}, "updated")
        exit_code = command % 2
        call("Bash", {"command": f"python -m pytest -q tests/test_m.py -k case_{command}"}, test_output, {"exit_code": exit_code})
    document = {
        "schema_version": "ATIF-v1.7",
        "session_id": "bench",
        "agent": {"name": "bench", "version": "1", "extra": {"cwd": ROOT}},
        "steps": steps,
        "extra": {"cwd": ROOT, "source_format": "claude-code"},
    }
    return json.dumps(document), changed


def _run(name: str, text: str, changed: int | None) -> None:
    started = time.perf_counter()
    trajectory = Trajectory.model_validate_json(text)
    loaded = time.perf_counter()
    result = replay_trajectory(trajectory)
    replayed = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        write_record(result, Path(out))
        written = time.perf_counter()
        on_disk = sum(p.stat().st_size for p in Path(out).rglob("*") if p.is_file())
        blob_bytes = sum(p.stat().st_size for p in (Path(out) / "blobs").iterdir())
        replay_rss = _peak_rss_mb()
        read_started = time.perf_counter()
        record = ReplayRecord.load(Path(out))
        snapshot_files = sum(len(record.files_before(c.command_index)) for c in record.shell_commands())
        read_back = time.perf_counter() - read_started
    fidelity = result.record.fidelity
    total = written - started
    megabytes = len(text.encode()) / 1e6
    print(f"== {name}")
    calls = sum(len(step.tool_calls or []) for step in trajectory.steps)
    print(f"input {megabytes:.1f} MB ATIF, {len(trajectory.steps)} steps, {calls} tool calls, {fidelity.events} timeline events, {fidelity.commands} shell commands")
    print(f"load+validate {loaded - started:.2f} s | replay {replayed - loaded:.2f} s | write {written - replayed:.2f} s | total {total:.2f} s")
    print(
        f"throughput {fidelity.events / total:,.0f} events/s, {len(trajectory.steps) / total:,.0f} steps/s, {megabytes / total:.1f} MB/s "
        f"(replay alone: {fidelity.events / (replayed - loaded):,.0f} events/s)"
    )
    print(f"read back: load + files_before() for all {fidelity.commands} commands ({snapshot_files:,} file contents) {read_back:.2f} s")
    print(f"peak RSS {replay_rss:.0f} MB through load+replay+write; {_peak_rss_mb():.0f} MB including the read back")
    changed_text = f"{changed / 1e6:.2f} MB changed by writes/edits; " if changed is not None else ""
    print(
        f"snapshot storage: {changed_text}{fidelity.stored_bytes / 1e6:.2f} MB stored (blobs {blob_bytes / 1e6:.2f} MB + deltas); "
        f"record on disk {on_disk / 1e6:.2f} MB incl. timeline with outputs"
    )
    print(f"fidelity: rebuilt {fidelity.files_rebuilt}, lost {fidelity.files_lost}, edits applied {fidelity.edits_applied}, failed {fidelity.edits_failed}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=["real", "generated"])
    scenario = parser.parse_args().scenario
    if scenario is None:
        for name in ("real", "generated"):
            subprocess.run([sys.executable, __file__, "--scenario", name], check=True)
        return
    if scenario == "real":
        converted = convert_source(REAL_FIXTURE)
        assert converted.trajectory is not None
        text = converted.trajectory.model_dump_json(exclude_none=True)
        _run(f"real: {REAL_FIXTURE.name} ({REAL_FIXTURE.stat().st_size / 1e6:.1f} MB native)", text, None)
    else:
        text, changed = _generated_session()
        _run(f"generated: {FILES} files, {COMMANDS} shell commands", text, changed)


if __name__ == "__main__":
    main()

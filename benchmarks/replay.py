"""Replay throughput, peak RSS and snapshot storage.

    .venv/bin/python benchmarks/replay.py            # both scenarios, each in its own process
    .venv/bin/python benchmarks/replay.py --scenario real|generated

    .venv/bin/python benchmarks/replay.py --scenario generated --commands 50000   # ~500 MB

Scenarios: the largest real fixture (pi-mono/before-compaction.jsonl, converted by
traj2env's converter) and a generated ATIF session with N shell commands (default
5,000, ~50 MB; 50,000 is ~500 MB) over a 200-file project (each command preceded by a
small edit). The generated document is written to a file by a separate process, so
its making does not count in the peak RSS. Timed as the replay stage does it
(``replay_file``: a file over 64 MB is streamed a step at a time): reading and
validating, replaying, writing the record. As in the stage, a streamed replay spills its
timeline into the output directory and that file is finished as ``record.json``, so
"write" is mostly the blobs, deltas and manifests. Targets: 500 MB / 50,000 commands in
< 30 s and < 1 GB peak RSS; stored snapshot bytes should track the bytes changed, not
commands x project size. Wall time on a shared machine swings with its load, so CPU
time is printed beside it.
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

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.replay import ReplayRecord, write_record
from traj2env_assets.stages.convert.conversion import trajectory_json
from traj2env_assets.stages.replay.partition import replay_file
from traj2env_assets_tests.corpus import corpus_folder, missing_reason

# The largest real log: outside the repository (traj2env_assets_tests/corpus), None where absent.
REAL_FOLDER = corpus_folder("real")
REAL_FIXTURE = REAL_FOLDER / "pi-mono" / "before-compaction.jsonl" if REAL_FOLDER else None
ROOT = "/bench/project"
FILES = 200
COMMANDS = 5_000


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _write_generated_session(path: Path, commands: int = COMMANDS) -> int:
    """Write an ATIF document to ``path`` step by step (steps last); return the content bytes its edits change."""
    module = "".join(
        f"def function_{i}(value):\n    return value * {i}  # padding padding padding\n" for i in range(300)
    )
    header = {
        "schema_version": "ATIF-v1.7",
        "session_id": "bench",
        "agent": {"name": "bench", "version": "1", "extra": {"cwd": ROOT}},
        "extra": {"cwd": ROOT, "source_format": "claude-code"},
    }
    handle = path.open("w", encoding="utf-8")
    handle.write(json.dumps(header)[:-1] + ', "steps": [')
    handle.write(json.dumps({"step_id": 1, "source": "user", "message": "refactor the project"}))
    count = 1
    changed = 0

    def call(name: str, arguments: dict, content: str, extra: dict | None = None) -> None:
        nonlocal count
        call_id = f"c{count}"
        result: dict = {"source_call_id": call_id, "content": content}
        if extra:
            result["extra"] = extra
        count += 1
        step = {
            "step_id": count,
            "source": "agent",
            "message": "",
            "tool_calls": [{"tool_call_id": call_id, "function_name": name, "arguments": arguments}],
            "observation": {"results": [result]},
        }
        handle.write("," + json.dumps(step))

    for index in range(FILES):
        text = module.replace("padding", f"file{index}")
        changed += len(text)
        call("Write", {"file_path": f"{ROOT}/pkg/module_{index}.py", "content": text}, "File created successfully")
    test_output = "".join(f"tests/test_m.py::test_case_{i} PASSED\n" for i in range(225))
    for command in range(commands):
        target = command % FILES
        number = command // FILES
        old = f"return value * {number}  #"
        new = f"return value * {number} + 1  #"
        changed += len(new)
        call("Edit", {"file_path": f"{ROOT}/pkg/module_{target}.py", "old_string": old, "new_string": new}, "updated")
        exit_code = command % 2
        call(
            "Bash",
            {"command": f"python -m pytest -q tests/test_m.py -k case_{command}"},
            test_output,
            {"exit_code": exit_code},
        )
    handle.write("]}")
    handle.close()
    return changed


def _run(name: str, source: Path, changed: int | None) -> None:
    megabytes = source.stat().st_size / 1e6
    cpu_started = time.process_time()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        result = replay_file(source, Path(out))
        replayed = time.perf_counter()
        write_record(result, Path(out))
        written = time.perf_counter()
        cpu = time.process_time() - cpu_started
        on_disk = sum(p.stat().st_size for p in Path(out).rglob("*") if p.is_file())
        blob_bytes = sum(p.stat().st_size for p in (Path(out) / "blobs").iterdir())
        replay_rss = _peak_rss_mb()
        if megabytes > 100:
            # Loading a 500 MB record whole is the miners' business, not the replay's.
            print(
                f"== {name}\ninput {megabytes:.1f} MB ATIF, {result.record.fidelity.events} timeline events, "
                f"{result.record.fidelity.commands} shell commands"
            )
            print(
                f"read+validate+replay {replayed - started:.2f} s | write {written - replayed:.2f} s | "
                f"total {written - started:.2f} s wall, {cpu:.2f} s CPU"
            )
            print(
                f"peak RSS {replay_rss:.0f} MB; record on disk {on_disk / 1e6:.2f} MB, blobs {blob_bytes / 1e6:.2f} MB"
            )
            return
        read_started = time.perf_counter()
        record = ReplayRecord.load(Path(out))
        snapshot_files = sum(len(record.files_before(c.command_index)) for c in record.shell_commands())
        read_back = time.perf_counter() - read_started
    fidelity = result.record.fidelity
    total = written - started
    print(f"== {name}")
    print(f"input {megabytes:.1f} MB ATIF, {fidelity.events} timeline events, {fidelity.commands} shell commands")
    print(
        f"read+validate+replay {replayed - started:.2f} s | write {written - replayed:.2f} s | "
        f"total {total:.2f} s wall, {cpu:.2f} s CPU"
    )
    print(f"throughput {fidelity.events / total:,.0f} events/s, {megabytes / total:.1f} MB/s")
    print(
        f"read back: load + files_before() for all {fidelity.commands} commands "
        f"({snapshot_files:,} file contents) {read_back:.2f} s"
    )
    print(f"peak RSS {replay_rss:.0f} MB through load+replay+write; {_peak_rss_mb():.0f} MB including the read back")
    changed_text = f"{changed / 1e6:.2f} MB changed by writes/edits; " if changed is not None else ""
    print(
        f"snapshot storage: {changed_text}{fidelity.stored_bytes / 1e6:.2f} MB stored "
        f"(blobs {blob_bytes / 1e6:.2f} MB + deltas); "
        f"record on disk {on_disk / 1e6:.2f} MB incl. timeline with outputs"
    )
    print(
        f"fidelity: rebuilt {fidelity.files_rebuilt}, lost {fidelity.files_lost}, "
        f"edits applied {fidelity.edits_applied}, failed {fidelity.edits_failed}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=["real", "generated"])
    parser.add_argument("--commands", type=int, default=COMMANDS, help="shell commands in the generated session")
    parser.add_argument("--write-generated", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.write_generated is not None:
        print(_write_generated_session(arguments.write_generated, arguments.commands))
        return
    scenario = arguments.scenario
    if scenario is None:
        for name in ("real", "generated"):
            subprocess.run(
                [sys.executable, __file__, "--scenario", name, "--commands", str(arguments.commands)], check=True
            )
        return
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "trajectory.json"
        if scenario == "real":
            if REAL_FIXTURE is None:
                print(f"real scenario left out: {missing_reason('real')}")
                return
            converted = convert_source(REAL_FIXTURE)
            assert converted.trajectory is not None
            source.write_text(trajectory_json(converted.trajectory), encoding="utf-8")
            del converted
            _run(f"real: {REAL_FIXTURE.name} ({REAL_FIXTURE.stat().st_size / 1e6:.1f} MB native)", source, None)
        else:
            # Made in a child process: its memory is not the replay's.
            made = subprocess.run(
                [sys.executable, __file__, "--write-generated", str(source), "--commands", str(arguments.commands)],
                check=True,
                capture_output=True,
                text=True,
            )
            _run(f"generated: {FILES} files, {arguments.commands} shell commands", source, int(made.stdout))


if __name__ == "__main__":
    main()

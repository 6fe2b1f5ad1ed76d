"""Runs pytest inside a task image for calibration. Stdlib + pytest only.

Shipped into a probe container by :mod:`traj2env_assets.mutation.probes` and started as
``python3 runner.py PLAN.json``. Two modes:

- ``calibrate``: the project root is reset to the image's own files and overlaid with
  each named state's files plus the test files; the test targets run ``repeat`` times on
  the ``must_pass`` state and once on every ``must_fail`` state. A test is kept when it
  passed in every ``must_pass`` run and in no ``must_fail`` run. Then every mutant of the
  ``must_pass`` state runs against the kept tests.
- ``mutants``: the given test ids run on the files as they are (the baseline must pass,
  but for the ``droppable`` ids that fail there: they are left out), then once per mutant.

Each pytest run is a forked child of this process, which has imported pytest but no
project code, so every run imports the project afresh (a mutant is never hidden by a
module imported earlier) without paying for a new interpreter and pytest's import each
time. Bytecode is never written, so a mutated file cannot be shadowed by a stale
``.pyc``. A mutant runs only the tests of the test modules that import its file (the
plan lists them; none listed: every test), stops at the first failure (``-x``) and has
a deadline of ten times the baseline run; mutants run one after another until ``budget_s`` is spent and
the rest are reported as not run. The last output line is ``MARKER`` + base64 of the
zlib-compressed JSON result (it must fit the probe's 4000-character output tail).
"""

import base64
import json
import os
import select
import shutil
import sys
import time
import zlib

MARKER = "TRAJ2ENV-PYTEST-PROBE "
KILLED, SURVIVED, TIMED_OUT, NOT_RUN = "k", "s", "t", "n"
PRISTINE = "/tmp/traj2env-pytest-probe/pristine"


def _child_pytest(workdir, args, write_fd):
    """In the forked child: run pytest, send the passed and failed node ids up the pipe, exit."""
    import pytest

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.path.insert(0, workdir)
    passed, failed = set(), set()

    class Outcomes:
        def pytest_runtest_logreport(self, report):
            if report.failed:
                failed.add(report.nodeid)
            elif report.when == "call" and report.passed:
                passed.add(report.nodeid)

    code = 1
    try:
        code = int(pytest.main(args, plugins=[Outcomes()]))
    finally:
        with os.fdopen(write_fd, "w") as pipe:
            json.dump({"code": code, "passed": sorted(passed - failed), "failed": sorted(failed)}, pipe)
        os._exit(0)


def _run(workdir, args, timeout_s):
    """One pytest run in a child: ({"code", "passed", "failed"} or None, timed out)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        os.chdir(workdir)
        _child_pytest(workdir, args, write_fd)
    os.close(write_fd)
    chunks, deadline = [], time.monotonic() + timeout_s
    with os.fdopen(read_fd, "rb") as pipe:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return None, True
            ready, _, _ = select.select([pipe], [], [], remaining)
            if ready:
                chunk = os.read(pipe.fileno(), 65536)
                if not chunk:
                    break
                chunks.append(chunk)
    os.waitpid(pid, 0)
    try:
        return json.loads(b"".join(chunks)), False
    except ValueError:
        return None, False


def _write(workdir, files):
    for path, content in files.items():
        target = os.path.join(workdir, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(content)


def _reset(workdir):
    """The project root as the image has it."""
    for name in os.listdir(workdir):
        path = os.path.join(workdir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    shutil.copytree(PRISTINE, workdir, dirs_exist_ok=True, symlinks=True)


def _apply(original, hunk):
    lines = original.splitlines(keepends=True)
    start = hunk["start"]
    return "".join([*lines[:start], hunk["text"], *lines[start + hunk["removed"] :]])


def _mutant_statuses(workdir, args, test_ids, mutants, per_mutant_s, deadline):
    statuses = []
    for hunk in mutants:
        if time.monotonic() > deadline:
            statuses.append(NOT_RUN)
            continue
        reaching = hunk.get("test_files") or []
        selected = [test_id for test_id in test_ids if test_id.split("::", 1)[0] in reaching] if reaching else test_ids
        if not selected:  # no kept test can import the mutated file
            statuses.append(SURVIVED)
            continue
        path = os.path.join(workdir, hunk["path"])
        with open(path, encoding="utf-8") as handle:
            original = handle.read()
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(_apply(original, hunk))
            result, timed_out = _run(workdir, [*args, "-x", *selected], per_mutant_s)
        finally:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(original)
        if timed_out:
            statuses.append(TIMED_OUT)
        elif result and set(selected) <= set(result["passed"]):
            statuses.append(SURVIVED)
        else:
            statuses.append(KILLED)
    return "".join(statuses)


def _calibrate(plan, started):
    workdir, args = plan["workdir"], plan["pytest_args"]
    shutil.copytree(workdir, PRISTINE, symlinks=True)
    order = [(plan["must_pass"], run) for run in range(plan["repeat"])] + [(name, 0) for name in plan["must_fail"]]
    outcomes, seconds = [], {}
    for name, _ in order:
        _reset(workdir)
        _write(workdir, plan["states"][name])
        _write(workdir, plan["tests"])
        began = time.monotonic()
        result, _ = _run(workdir, [*args, *plan["targets"]], plan["timeout_s"])
        seconds[name] = round(time.monotonic() - began, 3)
        outcomes.append((name, result or {"passed": [], "failed": []}))
    ids = sorted({test_id for _, result in outcomes for test_id in [*result["passed"], *result["failed"]]})
    runs = [
        [name, "".join("p" if test_id in result["passed"] else "f" for test_id in ids)] for name, result in outcomes
    ]
    base_runs = [letters for name, letters in runs if name == plan["must_pass"]]
    other_runs = [letters for name, letters in runs if name != plan["must_pass"]]
    kept = [
        test_id
        for index, test_id in enumerate(ids)
        if all(letters[index] == "p" for letters in base_runs) and all(letters[index] == "f" for letters in other_runs)
    ]
    report = {"ids": ids, "runs": runs, "seconds": seconds, "statuses": ""}
    if kept and plan["mutants"]:
        _reset(workdir)
        _write(workdir, plan["states"][plan["must_pass"]])
        _write(workdir, plan["tests"])
        per_mutant_s = max(5.0, 10 * seconds[plan["must_pass"]])
        deadline = started + plan["budget_s"]
        report["statuses"] = _mutant_statuses(workdir, args, kept, plan["mutants"], per_mutant_s, deadline)
    return report


def _mutants(plan, started):
    workdir, test_ids, args = plan["workdir"], plan["test_ids"], plan["pytest_args"]
    began = time.monotonic()
    baseline, _ = _run(workdir, [*args, *test_ids], plan["timeout_s"])
    baseline_s = time.monotonic() - began
    passed = set(baseline["passed"]) if baseline else set()
    # Droppable tests that fail on the files as they are take no part in the mutant runs.
    dropped = [test_id for test_id in plan.get("droppable", []) if test_id not in passed]
    test_ids = [test_id for test_id in test_ids if test_id not in dropped]
    if not baseline or not test_ids or not set(test_ids) <= passed:
        return {"baseline": "failed", "statuses": ""}
    per_mutant_s = max(5.0, 10 * baseline_s)
    statuses = _mutant_statuses(workdir, args, test_ids, plan["mutants"], per_mutant_s, started + plan["budget_s"])
    return {"baseline": "passed", "statuses": statuses, "dropped": dropped}


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        plan = json.load(handle)
    sys.dont_write_bytecode = True
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import pytest  # noqa: F401  (imported once here; every forked run reuses it)

    started = time.monotonic()
    result = _calibrate(plan, started) if plan["mode"] == "calibrate" else _mutants(plan, started)
    result["total_s"] = round(time.monotonic() - started, 3)
    payload = base64.b64encode(zlib.compress(json.dumps(result, separators=(",", ":")).encode(), 9)).decode()
    sys.stdout.write("\n" + MARKER + payload + "\n")


if __name__ == "__main__":
    main()

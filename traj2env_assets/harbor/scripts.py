"""The generated Dockerfile, ``solution/solve.sh`` and ``tests/test.sh``.

``tests/test.sh`` is the whole verifier: Harbor's separate verifier and traj2env's own
trial runner both run it as root in a fresh container from the task image, after the
submission has been copied to ``/workspace``. It

1. deletes every harness file the submission may have planted (conftest.py,
   sitecustomize.py, .pth, pytest/npm config...) and restores the pristine ones that the
   image saved at build time under ``/opt/traj2env/pristine``, then restores the
   tracked test files from ``/tests/traj2env/restore``;
2. adds a sentinel pair with names drawn at random for this run: a test that must pass
   and one that must fail. An in-process forgery or a hook that rewrites failures as
   passes flips the second one, and the reward becomes 0;
3. runs the tracked tests as the unprivileged user ``tester`` with a clean environment
   (``env -i``; ``python3 -I``; ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``;
   ``-p no:cacheprovider``; ``-c`` pointing at the restored config), recording outcomes
   outside the submission tree;
4. as root again, writes ``/logs/verifier/reward.txt`` and ``verdict.json`` (the
   directory is not writable by ``tester``).
"""

from __future__ import annotations

import shlex
from traj2env_assets.harbor.task_spec import (
    NODE_HARNESS_FILES,
    PYTHON_HARNESS_FILES,
    WORKSPACE,
    TaskSpec,
)

PRISTINE_DIR = "/opt/traj2env/pristine"
HARNESS_DIR = "/tests/traj2env"
TEST_USER = "tester"
TEST_UID = 2000
_CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def dockerfile(spec: TaskSpec) -> str:
    """Base and dependency layers first, so candidates share them; project files last."""
    pristine = " ".join(shlex.quote(path) for path in spec.pristine_paths())
    lines = [
        f"FROM {spec.image_name}",
        f"RUN id -u {TEST_USER} >/dev/null 2>&1 || "
        f"useradd --uid {TEST_UID} --no-create-home --shell /bin/sh {TEST_USER}",
        *spec.dependency_lines,
        f"WORKDIR {WORKSPACE}",
        f"COPY workspace/ {WORKSPACE}/",
        # The verifier restores test configuration from this copy, whatever the
        # submission did to /workspace.
        f"RUN mkdir -p {PRISTINE_DIR} && for path in {pristine}; do "
        f'if [ -e "$path" ]; then cp -a --parents "$path" {PRISTINE_DIR}/; fi; done',
    ]
    return "\n".join(lines) + "\n"


def solve_sh(spec: TaskSpec) -> str:
    """Restore the reference files over the project (no patch: a plain copy)."""
    lines = [
        "#!/bin/bash",
        "# Reference solution: restores the files of the recorded fix.",
        "set -euo pipefail",
        f"cd {WORKSPACE}",
    ]
    lines += [f"rm -rf -- {shlex.quote(path)}" for path in spec.solution_deleted]
    lines.append(f'cp -a "$(dirname "$0")/files/." {WORKSPACE}/')
    return "\n".join(lines) + "\n"


def tracked_ids_file(spec: TaskSpec) -> str:
    return "\n".join(spec.tests.tracked_test_ids) + "\n"


def pristine_paths_file(spec: TaskSpec) -> str:
    return "".join(f"{path}\n" for path in spec.pristine_paths())


def test_sh(spec: TaskSpec) -> str:
    tests = spec.tests
    names = PYTHON_HARNESS_FILES if tests.runner == "pytest" else NODE_HARNESS_FILES
    extra = {"*.pth", "__pycache__", ".pytest_cache"} if tests.runner == "pytest" else set()
    planted = sorted(names | extra)
    find_names = " -o ".join(f"-name {shlex.quote(name)}" for name in planted)
    head = _TEST_SH_HEAD.format(
        runner=tests.runner,
        work=WORKSPACE,
        harness=HARNESS_DIR,
        pristine=PRISTINE_DIR,
        find_names=find_names,
        user=TEST_USER,
    )
    run = _pytest_run(spec) if tests.runner == "pytest" else _node_run(spec)
    return head + run


def _pytest_run(spec: TaskSpec) -> str:
    tests = spec.tests
    config = (
        f"{WORKSPACE}/{tests.pytest_config}" if tests.pytest_config else f"{HARNESS_DIR}/pytest.ini"
    )
    # In mode "check" the recorded check's own selection runs (it covers the tracked tests;
    # naming them too would make pytest collect only them from a shared file).
    selection = tests.run_targets if tests.reward == "check" else tests.tracked_test_ids
    ids = " ".join(shlex.quote(arg) for arg in selection)
    return _PYTEST_RUN.format(
        timeout=tests.timeout_sec,
        user=TEST_USER,
        path=_CLEAN_PATH,
        harness=HARNESS_DIR,
        work=WORKSPACE,
        config=shlex.quote(config),
        ids=ids,
        mode=tests.reward,
    )


def _node_run(spec: TaskSpec) -> str:
    tests = spec.tests
    files = sorted({test_id.split("::", 1)[0] for test_id in [*tests.run_targets, *tests.tracked_test_ids]})
    return _NODE_RUN.format(
        files=" ".join(shlex.quote(path) for path in files),
        timeout=tests.timeout_sec,
        user=TEST_USER,
        path=_CLEAN_PATH,
        harness=HARNESS_DIR,
        mode=tests.reward,
    )


_TEST_SH_HEAD = """#!/bin/bash
# traj2env verifier ({runner}). Runs as root in a fresh container from the task image,
# after the submission was copied to {work}. See traj2env_assets/harbor/scripts.py.
set -uo pipefail
LOGS=/logs/verifier
# Root-owned and mode 0755: the test user cannot write the reward.
mkdir -p "$LOGS"
chmod 0755 "$LOGS"
rm -f "$LOGS/reward.txt" "$LOGS/reward.json" "$LOGS/verdict.json"
echo 0 > "$LOGS/reward.txt"

# 1. Planted harness files never reach the run; pristine config and tracked tests return.
find {work} -depth \\( {find_names} \\) -exec rm -rf {{}} + 2>/dev/null
while IFS= read -r path; do
  [ -n "$path" ] && rm -rf -- "{work}/$path"
done < {harness}/pristine_paths.txt
cp -a {pristine}/. {work}/
if [ -d {harness}/restore ]; then cp -a {harness}/restore/. {work}/; fi

# 2. Fresh names for the sentinel pair, and a results file outside the submission tree.
SENTINEL="s$(od -An -N8 -tx1 /dev/urandom | tr -d ' \\n')"
RUN_DIR="$(mktemp -d /tmp/traj2env-run.XXXXXX)"
chown -R {user}: {work} "$RUN_DIR"
cd {work}
"""

_PYTEST_RUN = """cat > "$RUN_DIR/test_$SENTINEL.py" <<EOF
def test_${{SENTINEL}}_pass():
    assert True


def test_${{SENTINEL}}_fail():
    assert False
EOF
chown {user}: "$RUN_DIR/test_$SENTINEL.py"

# 3. The tracked tests (and, in mode "check", the rest of the recorded check), unprivileged,
#    in a clean environment.
timeout -k 10 {timeout} runuser -u {user} -- env -i PATH={path} HOME="$RUN_DIR" LANG=C.UTF-8 \\
  PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTHONDONTWRITEBYTECODE=1 \\
  python3 -I {harness}/run_pytest.py "$RUN_DIR/results.jsonl" {work} \\
  -p no:cacheprovider -c {config} --rootdir {work} -q \\
  {ids} "$RUN_DIR/test_$SENTINEL.py" > "$LOGS/test-output.txt" 2>&1
echo "pytest exit code: $?" >> "$LOGS/test-output.txt"

# 4. The verdict, as root.
python3 -I {harness}/verdict.py "$RUN_DIR/results.jsonl" {harness}/tracked_ids.txt \\
  "$SENTINEL" {mode} "$LOGS"
"""

_NODE_RUN = """TEST_FILES=({files})
for file in "${{TEST_FILES[@]}}"; do
  cat >> "$file" <<EOF

;import("node:test").then(({{ test }}) => {{ test("${{SENTINEL}}_pass", () => {{}}); test("${{SENTINEL}}_fail", () => {{ throw new Error("sentinel"); }}); }});
EOF
done

# 3. The tracked test files (and, in mode "check", the check's other test files),
#    unprivileged, in a clean environment.
timeout -k 10 {timeout} runuser -u {user} -- env -i PATH={path} HOME="$RUN_DIR" LANG=C.UTF-8 \\
  NODE_ENV=test node --test --test-reporter={harness}/node_reporter.mjs \\
  --test-reporter-destination="$RUN_DIR/results.jsonl" --test-reporter=spec \\
  --test-reporter-destination=stdout "${{TEST_FILES[@]}}" > "$LOGS/test-output.txt" 2>&1
echo "node --test exit code: $?" >> "$LOGS/test-output.txt"

# 4. The verdict, as root.
node {harness}/verdict.mjs "$RUN_DIR/results.jsonl" {harness}/tracked_ids.txt \\
  "$SENTINEL" {mode} "$LOGS" "${{TEST_FILES[@]}}"
"""

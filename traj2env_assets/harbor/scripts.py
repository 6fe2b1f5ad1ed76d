"""The generated Dockerfile, ``solution/solve.sh`` and ``tests/test.sh``.

``tests/test.sh`` is the whole verifier: Harbor's separate verifier and traj2env's own
trial runner both run it as root in a fresh container from the task image, after the
submission has been copied to ``/workspace``. Only solution code crosses. It

0. removes every symlink that resolves outside the workspace and every setuid bit;
1. deletes every test path (test folders and files, see ``conventions.is_test_path``),
   harness file (conftest.py, sitecustomize.py, .pth, pytest/npm config...) and
   ``node_modules`` and Python environment (virtualenv, site-packages) the submission
   holds, and restores the pristine ones from the full
   copy of the project the image saved at build time under ``/opt/traj2env/pristine``;
   a task with a behaviour gate (``traj2env_assets.gate``) then has the gate's worker
   answer its cases on the solution code as the user ``solver``, while the project is
   root's and read-only and ``/tests`` (the expected answers, the hidden tests) is
   root-only; then the hidden tests return from ``/tests/traj2env/restore``;
2. runs the static tamper check (``verifier_files/tamper_check.py`` / ``.mjs``) of the
   solution code against that pristine copy;
3. adds sentinel pairs with names and bodies drawn at random for this run, a test that
   must pass and one that must fail, among the project's tests; restored paths become
   root-owned and read-only for the run;
4. runs the tests as the unprivileged user ``tester`` with a clean environment
   (``env -i``; ``python3 -I``, the recorded check's import paths put on sys.path by
   ``run_pytest.py`` itself; ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``;
   ``-p no:cacheprovider``; ``-c`` pointing at the restored config; for Node the
   assertion and test modules frozen). Outcomes arrive signed on a pipe that root drains
   into a root-only file; every process of ``tester`` is killed afterwards;
5. as root again, writes ``/logs/verifier/reward.txt`` and ``verdict.json`` (the
   directory is not writable by ``tester``) with ``verifier_files/verdict.py`` / ``.mjs``,
   which also compares the gate's answers with the reference's.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import PurePosixPath

from traj2env_assets.conventions import TEST_DIR_NAMES, TEST_FILE_GLOBS
from traj2env_assets.gate.runtime import WORKER
from traj2env_assets.harbor.task_spec import (
    ANSWER_FILE,
    ANSWER_WORKDIR,
    IMPORTS_KEPT_TOOLS,
    NODE_MODULES,
    NODE_TEST_RUNNERS,
    PYTHON_ENVIRONMENT_DIRS,
    WORKSPACE,
    TaskSpec,
    harness_files,
)

PRISTINE_DIR = "/opt/traj2env/pristine"
REFERENCE_PROGRAM = "reference.py"
GOLD_FILE = "answer.json"
HARNESS_DIR = "/tests/traj2env"
TEST_USER = "tester"
TEST_UID = 2000
# The behaviour gate's worker runs solution code as this user, apart from the test user.
GATE_USER = "solver"
GATE_UID = 2001
GATE_CASES = "gate_cases.json"
GATE_EXPECTED = "gate_expected.json"
GATE_TIMEOUT_S = 180
TAMPER_CHECK_TIMEOUT_S = 120
_CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def dockerfile(spec: TaskSpec) -> str:
    """Base and dependency layers first, so candidates share them; project files last."""
    if spec.answer is not None:
        # A qa image: the family's lines install the analysis packages and the pinned
        # data; the agent starts in an empty-handed /workdir.
        lines = [f"FROM {spec.image_name}", *spec.dependency_lines, f"WORKDIR {ANSWER_WORKDIR}"]
        return "\n".join(lines) + "\n"
    lines = [
        f"FROM {spec.image_name}",
        *(
            f"RUN id -u {user} >/dev/null 2>&1 || useradd --uid {uid} --no-create-home --shell /bin/sh {user}"
            for user, uid in ((TEST_USER, TEST_UID), (GATE_USER, GATE_UID))
        ),
        *spec.dependency_lines,
        f"WORKDIR {WORKSPACE}",
        f"COPY workspace/ {WORKSPACE}/",
        # The verifier restores tests, harness config and installed packages from this
        # copy, whatever the submission did to /workspace.
        f"RUN mkdir -p {PRISTINE_DIR} && cp -a {WORKSPACE}/. {PRISTINE_DIR}/",
    ]
    return "\n".join(lines) + "\n"


def solve_sh(spec: TaskSpec) -> str:
    """Restore the reference files over the project (no patch: a plain copy); for a qa
    task, run the reference program (``solution/files/reference.py``) into the answer file."""
    if spec.answer is not None:
        return (
            "#!/bin/bash\n"
            "# Reference solution: the program that computes the answer from the data files.\n"
            "set -euo pipefail\n"
            f"cd {ANSWER_WORKDIR}\n"
            f'python3 "$(dirname "$0")/files/{REFERENCE_PROGRAM}" > {ANSWER_FILE}.partial\n'
            f"mv {ANSWER_FILE}.partial {ANSWER_FILE}\n"
        )
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
    return "\n".join(spec.test_verifier().tracked_test_ids) + "\n"


def gate_ids_file(spec: TaskSpec) -> str:
    return "".join(f"{test_id}\n" for test_id in spec.test_verifier().gate_test_ids)


def pristine_paths_file(spec: TaskSpec) -> str:
    return "".join(f"{path}\n" for path in spec.pristine_paths())


def test_sh(spec: TaskSpec) -> str:
    if spec.answer is not None:
        return _ANSWER_TEST_SH.format(answer=ANSWER_FILE, harness=HARNESS_DIR, gold=GOLD_FILE)
    tests = spec.test_verifier()
    harness_names = harness_files(tests.runner)
    extra = {"*.pth", "__pycache__", ".pytest_cache"} if tests.runner not in NODE_TEST_RUNNERS else set()
    # A lint check's fix may edit test code: only configuration is restored.
    test_dirs = "-false" if tests.runner == "lint" else _find_names(TEST_DIR_NAMES)
    test_globs = [] if tests.runner == "lint" else TEST_FILE_GLOBS
    head = _TEST_SH_HEAD.format(
        runner=tests.runner,
        work=WORKSPACE,
        harness=HARNESS_DIR,
        pristine=PRISTINE_DIR,
        user=TEST_USER,
        test_dirs=test_dirs,
        test_files=_find_names([*test_globs, *sorted(harness_names | extra)]),
        node_modules=NODE_MODULES,
        node_modules_action="-print0" if tests.runner in NODE_TEST_RUNNERS or spec.base_image == "node" else "",
        python_env_dirs=_find_names(PYTHON_ENVIRONMENT_DIRS),
        tamper=_tamper_check(spec),
        tamper_timeout=TAMPER_CHECK_TIMEOUT_S,
        gate=_gate_run() if tests.behaviour_gate is not None else "",
    )
    run = {
        "pytest": _pytest_run,
        "node": _node_run,
        "jest": _jest_run,
        "mocha": _mocha_run,
        "vitest": _vitest_run,
        "lint": _lint_run,
    }[tests.runner](spec)
    return head + run


def _gate_run() -> str:
    return _GATE_RUN.format(
        user=GATE_USER,
        timeout=GATE_TIMEOUT_S,
        path=_CLEAN_PATH,
        worker=WORKER,
        cases=GATE_CASES,
        expected=GATE_EXPECTED,
    )


def _find_names(names: Iterable[str]) -> str:
    return " -o ".join(f"-name {shlex.quote(name)}" for name in sorted(names))


def _pytest_run(spec: TaskSpec) -> str:
    tests = spec.test_verifier()
    config = f"{WORKSPACE}/{tests.pytest_config}" if tests.pytest_config else f"{HARNESS_DIR}/pytest.ini"
    # In mode "check" the recorded check's own selection runs (it covers the tracked tests;
    # naming them too would make pytest collect only them from a shared file).
    # In mode "split" the existing (gate) tests run beside the tracked ones.
    selection = tests.run_targets if tests.reward == "check" else [*tests.tracked_test_ids, *tests.gate_test_ids]
    # Sentinels go into every file the verdict reads outcomes from: the existing (gate)
    # tests' files too, so a forgery confined to them flips a sentinel as well.
    tracked_files = sorted({test_id.split("::", 1)[0] for test_id in [*tests.tracked_test_ids, *tests.gate_test_ids]})
    # Sentinels in a file the selection collects whole run with it; elsewhere they are
    # named. (A file argument plus a node id of the same file makes pytest collect only
    # the node id from that file.)
    whole = [arg for arg in selection if "::" not in arg]
    return _PYTEST_RUN.format(
        timeout=tests.timeout_sec,
        user=TEST_USER,
        path=_CLEAN_PATH,
        harness=HARNESS_DIR,
        work=WORKSPACE,
        pristine=PRISTINE_DIR,
        config=shlex.quote(config),
        ids=" ".join(shlex.quote(arg) for arg in selection),
        tracked_files=" ".join(shlex.quote(path) for path in tracked_files),
        collected=" ".join(shlex.quote(arg) for arg in whole),
        mode=tests.reward,
        import_paths=shlex.quote(":".join(tests.import_paths)),
        deselect="".join(f" --deselect {shlex.quote(test_id)}" for test_id in tests.deselected_test_ids),
        gate_files=(
            f'{HARNESS_DIR}/{GATE_CASES} {HARNESS_DIR}/{GATE_EXPECTED} "$RUN_DIR/gate-answers.jsonl"'
            if tests.behaviour_gate is not None
            else ""
        ),
    )


def _node_run(spec: TaskSpec) -> str:
    return _NODE_RUN.format(**_node_run_fields(spec))


def _jest_run(spec: TaskSpec) -> str:
    return _SIGNED_RUNNER_RUN.format(**_node_run_fields(spec), **_JEST)


def _mocha_run(spec: TaskSpec) -> str:
    return _SIGNED_RUNNER_RUN.format(**_node_run_fields(spec), **_MOCHA)


def _vitest_run(spec: TaskSpec) -> str:
    return _SIGNED_RUNNER_RUN.format(
        **_node_run_fields(spec),
        **_VITEST,
        before_run=_VITEST_ENTRY_CHECK.format(entry=shlex.quote(vitest_entry(spec))),
    )


def vitest_entry(spec: TaskSpec) -> str:
    """The vitest the verifier runs: the project's, installed at build time in the check's
    folder (``npm ci``), which the verifier restores from the image's pristine copy."""
    return str(PurePosixPath(WORKSPACE, spec.test_verifier().check_dir, NODE_MODULES, "vitest", "vitest.mjs"))


def _node_run_fields(spec: TaskSpec) -> dict[str, object]:
    tests = spec.test_verifier()
    files = sorted({test_id.split("::", 1)[0] for test_id in [*tests.run_targets, *tests.tracked_test_ids]})
    return {
        "files": " ".join(shlex.quote(path) for path in files),
        "timeout": tests.timeout_sec,
        "user": TEST_USER,
        "path": _CLEAN_PATH,
        "harness": HARNESS_DIR,
        "mode": tests.reward,
    }


_ANSWER_TEST_SH = """#!/bin/bash
# traj2env verifier (answer file). Runs as root in a fresh container from the task image;
# only {answer} crossed from the agent's container. The grader reads it as data (no
# link followed, size-capped, never executed) with the standard library alone
# (``python3 -I -S``: no site packages, no environment, no working-directory imports).
set -uo pipefail
LOGS=/logs/verifier
mkdir -p "$LOGS"
chmod 0755 "$LOGS"
rm -f "$LOGS/reward.txt" "$LOGS/reward.json" "$LOGS/verdict.json"
echo 0 > "$LOGS/reward.txt"
cd /
env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \\
  python3 -I -S {harness}/grade_answer.py {answer} {harness}/{gold} "$LOGS" > "$LOGS/test-output.txt" 2>&1
echo "grader exit code: $?" >> "$LOGS/test-output.txt"
"""


# The exit codes a lint tool reports its findings with (a crash or usage error is another):
# tsc exits 2 when it still emits output and 1 when it does not (``--noEmit``).
_FINDINGS_EXITS = {"tsc": "1,2"}


def _check_program(spec: TaskSpec) -> str:
    """The name of the program a lint, type or build check runs (``tsc``, ``esbuild``)."""
    command = spec.test_verifier().check_command
    return PurePosixPath(command[0]).name if command else ""


def _lint_run(spec: TaskSpec) -> str:
    tests = spec.test_verifier()
    program = _check_program(spec)
    return _LINT_RUN.format(
        timeout=tests.timeout_sec,
        user=TEST_USER,
        path=_CLEAN_PATH,
        harness=HARNESS_DIR,
        check_dir=shlex.quote(tests.check_dir or "."),
        command=shlex.join(tests.check_command),
        findings_exits=_FINDINGS_EXITS.get(program, "1"),
    )


_TAMPER_CHECK = {
    "pytest": 'python3 -I "$HARNESS/tamper_check.py"',
    "node": 'node "$HARNESS/tamper_check.mjs"',
    "jest": 'node "$HARNESS/tamper_check.mjs"',
    "mocha": 'node "$HARNESS/tamper_check.mjs"',
    "vitest": 'node "$HARNESS/tamper_check.mjs"',
    "lint": 'python3 -I "$HARNESS/lint_tamper_check.py"',
}


def _tamper_check(spec: TaskSpec) -> str:
    """The runner's static tamper check; a build check whose errors name imports keeps them."""
    runner = spec.test_verifier().runner
    return _TAMPER_CHECK[runner] + (
        " --imports-kept" if runner == "lint" and _check_program(spec) in IMPORTS_KEPT_TOOLS else ""
    )


_TEST_SH_HEAD = """#!/bin/bash
# traj2env verifier ({runner}). Runs as root in a fresh container from the task image,
# after the submission was copied to {work}. See traj2env_assets/harbor/scripts.py.
set -uo pipefail
WORK={work}
HARNESS={harness}
PRISTINE={pristine}
LOGS=/logs/verifier
# Root-owned and mode 0755: the test user cannot write the reward.
mkdir -p "$LOGS"
chmod 0755 "$LOGS"
rm -f "$LOGS/reward.txt" "$LOGS/reward.json" "$LOGS/verdict.json"
echo 0 > "$LOGS/reward.txt"
# Root-only: the results, the sentinels' expected outcomes, the tamper findings.
RUN_DIR="$(mktemp -d /tmp/traj2env-run.XXXXXX)"
TEST_HOME="$(mktemp -d /tmp/traj2env-home.XXXXXX)"
chown {user}: "$TEST_HOME"
# Root-owned, readable by the test user: the list of restored paths.
SHARED_DIR="$(mktemp -d /tmp/traj2env-shared.XXXXXX)"
chmod 0755 "$SHARED_DIR"
RESTORED="$SHARED_DIR/restored.txt"

# 0. No link that resolves outside the workspace (chains included), no setuid bit.
find "$WORK" -type l -print0 | while IFS= read -r -d '' link; do
  case "$(realpath -m -- "$link")" in "$WORK" | "$WORK"/*) ;; *) rm -f -- "$link" ;; esac
done
find "$WORK" -perm /6000 -exec chmod ug-s {{}} + 2>/dev/null

# 1. Only solution code crosses: every test path, harness file and installed package the
#    submission holds is deleted; the pristine ones and the hidden tests return. Anything
#    named node_modules goes, not only folders: the pristine folder cannot be copied over
#    a link, which would leave the submission's packages (a tool the verifier runs) in place.
find "$WORK" -mindepth 1 \\( -name {node_modules} -prune {node_modules_action} \\) \\
  -o \\( -type d \\( {test_dirs} \\) -prune -print0 \\) \\
  -o \\( {test_files} \\) -prune -print0 | xargs -0 -r rm -rf --
while IFS= read -r path; do
  [ -n "$path" ] || continue
  rm -rf -- "${{WORK:?}}/$path"
  if [ -e "$PRISTINE/$path" ]; then (cd "$PRISTINE" && cp -a --parents -- "$path" "$WORK/"); fi
done < "$HARNESS/pristine_paths.txt"
(cd "$PRISTINE" && find . -name {node_modules} -type d -prune -exec cp -a --parents {{}} "$WORK/" \\;)
# Installed Python environments (a virtualenv, site-packages) never cross either: the
# verifier uses the image's own, and any the pristine project holds come back.
python_environments() {{
  find "$1" -mindepth 1 \\( -type f -name pyvenv.cfg -printf '%h\\0' \\) \\
    -o \\( -type d \\( {python_env_dirs} \\) -prune -print0 \\)
}}
python_environments "$WORK" | xargs -0 -r rm -rf --
(cd "$PRISTINE" && python_environments . | xargs -0 -r -I{{}} cp -a --parents {{}} "$WORK/")
{gate}if [ -d "$HARNESS/restore" ]; then cp -a "$HARNESS/restore/." "$WORK/"; fi

# 2. The static tamper check of the solution code against the pristine project. A check
#    that does not finish (a submission made slow to scan) leaves no report: reward 0.
timeout -k 5 {tamper_timeout} {tamper} "$PRISTINE" "$WORK" "$RUN_DIR/tamper.json" > "$LOGS/tamper-check.txt" 2>&1

# Random words for the sentinel tests' names, random numbers for their bodies.
WORDS=(parse load merge split count total order limit value empty range render window cache index match)
random_number() {{ od -An -N2 -tu2 /dev/urandom | tr -d ' '; }}
random_words() {{ echo "${{WORDS[$(random_number) % ${{#WORDS[@]}}]}}$1${{WORDS[$(random_number) % ${{#WORDS[@]}}]}}$1$(random_number)"; }}

# The test user owns the solution code; restored paths stay root's, read-only, and their
# ancestors are sticky (1777) so they cannot be renamed or replaced during the run.
protect_restored() {{
  chown -R {user}: "$WORK"
  while IFS= read -r path; do
    [ -n "$path" ] && [ -e "$WORK/$path" ] || continue
    chown -R root: "$WORK/$path" && chmod -R go-w "$WORK/$path"
    parent="$(dirname "$path")"
    while [ "$parent" != "." ]; do
      chown root: "$WORK/$parent" && chmod 1777 "$WORK/$parent"
      parent="$(dirname "$parent")"
    done
  done < "$RESTORED"
  chown root: "$WORK" && chmod 1777 "$WORK"
}}

# The results channel: a FIFO drained by root into a root-only file; the test process
# writes to it on descriptor 3 and signs with the key it reads once from descriptor 4.
KEY="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \\n')"
mkfifo -m 0600 "$RUN_DIR/channel"
cat "$RUN_DIR/channel" > "$RUN_DIR/results.jsonl" &
READER=$!
touch "$RUN_DIR/sentinels.txt"
cp "$HARNESS/pristine_paths.txt" "$RESTORED"
if [ -d "$HARNESS/restore" ]; then (cd "$HARNESS/restore" && find . -type f | sed 's|^\\./||') >> "$RESTORED"; fi
(cd "$WORK" && find . -name {node_modules} -type d -prune | sed 's|^\\./||') >> "$RESTORED"
(cd "$WORK" && python_environments . | tr '\\0' '\\n' | sed 's|^\\./||') >> "$RESTORED"
cd "$WORK"
"""  # noqa: E501 - shell kept line for line as test.sh gets it

_GATE_RUN = """
# 1b. The behaviour gate: the worker answers every case (calls recorded from the tests on
#     the reference, and perturbed ones the agent never saw) on the solution code, as the
#     user {user}. The project is root's and read-only for it; /tests (the expected answers,
#     the hidden tests, this harness) and root's run folder are closed to it. It writes
#     answers on descriptor 3 into a root-owned file; root compares them in step 5.
chown -R root: "$WORK" && chmod -R a+rX,go-w "$WORK"
chmod 0700 /tests
GATE_DIR="$(mktemp -d /tmp/traj2env-gate.XXXXXX)"
GATE_HOME="$(mktemp -d /tmp/traj2env-gate-home.XXXXXX)"
chmod 0755 "$GATE_DIR" && chown {user}: "$GATE_HOME"
cp "$HARNESS/{worker}" "$HARNESS/{cases}" "$GATE_DIR/" && chmod 0644 "$GATE_DIR"/*
(cd "$WORK" && timeout -k 5 {timeout} runuser -u {user} -- env -i PATH={path} HOME="$GATE_HOME" LANG=C.UTF-8 \\
  PYTHONDONTWRITEBYTECODE=1 python3 -I "$GATE_DIR/{worker}" "$WORK" "$GATE_DIR/{cases}" \\
  3> "$RUN_DIR/gate-answers.jsonl" > "$LOGS/gate-output.txt" 2>&1)
echo "gate worker exit code: $?" >> "$LOGS/gate-output.txt"
runuser -u {user} -- bash -c 'kill -9 -1' 2>/dev/null
chmod 0600 "$HARNESS/{expected}" && chmod 0755 /tests
"""

_PYTEST_RUN = """
# 3. Sentinels, as test code among the project's tests: in a new module beside the first
#    tracked test file and appended to every tracked test file, a test that must pass and
#    one that must fail. A forgery that flips failures to passes flips one of them.
add_sentinels() {{
  local file="$1" a b pass fail
  a=$(random_number); b=$(random_number)
  pass="test_$(random_words _)"; fail="test_$(random_words _)"
  printf '\\n\\ndef %s():\\n    assert %d + %d == %d\\n\\n\\ndef %s():\\n    assert %d + %d == %d\\n' \\
    "$pass" "$a" "$b" "$((a + b))" "$fail" "$b" "$a" "$((a + b + 1))" >> "$WORK/$file"
  printf '%s::%s\\tpassed\\n%s::%s\\tfailed\\n' "$file" "$pass" "$file" "$fail" >> "$RUN_DIR/sentinels.txt"
  printf '%s\\n' "$file" >> "$RESTORED"
}}
TRACKED_FILES=({tracked_files})
# The selection's whole files and folders: sentinels inside them need not be named.
COLLECTED=({collected})
SENTINEL_MODULE="$(dirname "${{TRACKED_FILES[0]}}")/test_$(random_words _).py"
SENTINEL_MODULE="${{SENTINEL_MODULE#./}}"
: > "$WORK/$SENTINEL_MODULE"
for file in "$SENTINEL_MODULE" "${{TRACKED_FILES[@]}}"; do add_sentinels "$file"; done
protect_restored

# 4. The tests (in mode "check" the recorded check's whole selection) and the sentinels,
#    unprivileged, in a clean environment.
covered() {{
  local target
  for target in "${{COLLECTED[@]}}"; do
    case "$1" in "$target" | "${{target%/}}"/*) return 0 ;; esac
    [ "$target" = "." ] && return 0
  done
  return 1
}}
SENTINEL_ARGS=()
covered "$SENTINEL_MODULE" || SENTINEL_ARGS+=("$SENTINEL_MODULE")
while IFS=$'\\t' read -r test_id _; do
  file="${{test_id%%::*}}"
  [ "$file" = "$SENTINEL_MODULE" ] || covered "$file" || SENTINEL_ARGS+=("$test_id")
done < "$RUN_DIR/sentinels.txt"
exec 3> "$RUN_DIR/channel"
timeout -k 10 {timeout} runuser -u {user} -- env -i PATH={path} HOME="$TEST_HOME" LANG=C.UTF-8 \\
  PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTHONDONTWRITEBYTECODE=1 \\
  python3 -I {harness}/run_pytest.py {work} {pristine} "$RESTORED" {import_paths} \\
  -p no:cacheprovider -c {config} --rootdir {work} -q --continue-on-collection-errors{deselect} \\
  {ids} "${{SENTINEL_ARGS[@]}}" 4< <(printf '%s' "$KEY") > "$LOGS/test-output.txt" 2>&1
echo "pytest exit code: $?" >> "$LOGS/test-output.txt"
exec 3>&-
# Anything the tests left running would hold the channel open.
runuser -u {user} -- bash -c 'kill -9 -1' 2>/dev/null
wait "$READER"

# 5. The verdict, as root.
python3 -I {harness}/verdict.py "$RUN_DIR/results.jsonl" "$KEY" {harness}/tracked_ids.txt \\
  "$RUN_DIR/sentinels.txt" {mode} "$RUN_DIR/tamper.json" "$LOGS" {harness}/gate_ids.txt {gate_files}
"""

_NODE_RUN = """
# 3. Sentinels, appended to every test file of the run: a test that must pass and one
#    that must fail, names and bodies drawn at random.
TEST_FILES=({files})
for file in "${{TEST_FILES[@]}}"; do
  a=$(random_number); b=$(random_number)
  pass="$(random_words ' ')"; fail="$(random_words ' ')"
  printf '\\n;import("node:test").then(({{ test }}) => {{ test("%s", () => {{ if (%d + %d !== %d) throw new Error("%s"); }}); test("%s", () => {{ if (%d + %d !== %d) throw new Error("%s"); }}); }});\\n' \\
    "$pass" "$a" "$b" "$((a + b))" "$pass" "$fail" "$b" "$a" "$((a + b + 1))" "$fail" >> "$file"
  printf '%s::%s\\tpassed\\n%s::%s\\tfailed\\n' "$file" "$pass" "$file" "$fail" >> "$RUN_DIR/sentinels.txt"
  printf '%s\\n' "$file" >> "$RESTORED"
done
protect_restored

# 4. The test files (in mode "check" also the check's other test files), unprivileged,
#    in a clean environment, with the assertion and test modules frozen.
exec 3> "$RUN_DIR/channel"
timeout -k 10 {timeout} runuser -u {user} -- env -i PATH={path} HOME="$TEST_HOME" LANG=C.UTF-8 \\
  NODE_ENV=test node --import {harness}/node_guard.mjs --test \\
  --test-reporter={harness}/node_reporter.mjs --test-reporter-destination=/dev/null \\
  --test-reporter=spec --test-reporter-destination=stdout "${{TEST_FILES[@]}}" \\
  4< <(printf '%s' "$KEY") > "$LOGS/test-output.txt" 2>&1
echo "node --test exit code: $?" >> "$LOGS/test-output.txt"
exec 3>&-
# Anything the tests left running would hold the channel open.
runuser -u {user} -- bash -c 'kill -9 -1' 2>/dev/null
wait "$READER"

# 5. The verdict, as root.
node {harness}/verdict.mjs "$RUN_DIR/results.jsonl" "$KEY" {harness}/tracked_ids.txt \\
  "$RUN_DIR/sentinels.txt" {mode} "$RUN_DIR/tamper.json" "$LOGS"
"""  # noqa: E501 - shell kept line for line as test.sh gets it

_LINT_RUN = """
# The results channel carries nothing for a lint check: root reads the tool's exit code
# itself, and the tool (root-owned, run with -I) executes no project code.
exec 3> "$RUN_DIR/channel"
exec 3>&-
wait "$READER"
protect_restored

# 3. The check, unprivileged, in a clean environment, with its caches outside the project:
#    first on the pristine project, where it must still fail as recorded (the tool works
#    and sees the code), then on the submission, where it must pass.
run_check() {{  # usage: PROJECT_DIR OUTPUT_FILE
  (cd "$1"/{check_dir} && timeout -k 10 {timeout} runuser -u {user} -- env -i PATH={path} HOME="$TEST_HOME" \\
    LANG=C.UTF-8 NO_COLOR=1 CI=1 PYTHONDONTWRITEBYTECODE=1 RUFF_CACHE_DIR="$TEST_HOME/ruff-cache-$2" \\
    MYPY_CACHE_DIR="$TEST_HOME/mypy-cache-$2" {command}) > "$LOGS/$2" 2>&1
}}
run_check "$PRISTINE" control-output.txt
CONTROL_EXIT=$?
run_check "$WORK" test-output.txt
CHECK_EXIT=$?
echo "check exit code: $CHECK_EXIT (on the pristine project: $CONTROL_EXIT)" >> "$LOGS/test-output.txt"
runuser -u {user} -- bash -c 'kill -9 -1' 2>/dev/null

# 4. The verdict, as root.
python3 -I {harness}/lint_verdict.py "$CONTROL_EXIT" "$CHECK_EXIT" "$RUN_DIR/tamper.json" "$LOGS" {findings_exits}
"""

# jest and mocha: a reporter of the verifier's own in the runner's parent process signs
# each test's outcome; the test files run in the runner's worker processes.
_SIGNED_RUNNER_RUN = """
# 3. Sentinels, appended to every test file of the run and in a module of their own (so
#    the runner has two files at least and runs them in workers, never in its own
#    process): a test that must pass and one that must fail, {sentinel_how}.
add_sentinels() {{
  local file="$1" a b pass fail
  a=$(random_number); b=$(random_number)
  pass="$(random_words ' ')"; fail="$(random_words ' ')"
  printf '\\n;{sentinel}\\n{sentinel}\\n' \\
    "$pass" "$a" "$b" "$((a + b))" "$fail" "$b" "$a" "$((a + b + 1))" >> "$WORK/$file"
  printf '%s::%s\\tpassed\\n%s::%s\\tfailed\\n' "$file" "$pass" "$file" "$fail" >> "$RUN_DIR/sentinels.txt"
  printf '%s\\n' "$file" >> "$RESTORED"
}}
TEST_FILES=({files})
SENTINEL_MODULE="$(dirname "${{TEST_FILES[0]}}")/$(random_words -){sentinel_module}"
SENTINEL_MODULE="${{SENTINEL_MODULE#./}}"
: > "$WORK/$SENTINEL_MODULE"
for file in "$SENTINEL_MODULE" "${{TEST_FILES[@]}}"; do add_sentinels "$file"; done
protect_restored

{before_run}# 4. The test files, unprivileged, in a clean environment, {run_how}.
exec 3> "$RUN_DIR/channel"
timeout -k 10 {timeout} runuser -u {user} -- env -i PATH={path} HOME="$TEST_HOME" LANG=C.UTF-8 \\
  NODE_ENV=test CI=1 NO_COLOR=1 {command} "$SENTINEL_MODULE" "${{TEST_FILES[@]}}" \\
  4< <(printf '%s' "$KEY") > "$LOGS/test-output.txt" 2>&1
echo "{runner} exit code: $?" >> "$LOGS/test-output.txt"
exec 3>&-
# Anything the tests left running would hold the channel open.
runuser -u {user} -- bash -c 'kill -9 -1' 2>/dev/null
wait "$READER"

# 5. The verdict, as root.
node {harness}/verdict.mjs "$RUN_DIR/results.jsonl" "$KEY" {harness}/tracked_ids.txt \\
  "$RUN_DIR/sentinels.txt" {mode} "$RUN_DIR/tamper.json" "$LOGS"
"""
_JEST = {
    "runner": "jest",
    "before_run": "",
    "sentinel_how": "through jest's own expect",
    "sentinel": 'test("%s", () => { expect(%d + %d).toBe(%d); });',
    "sentinel_module": ".test.js",
    "run_how": "in two workers at least; jest's cache outside the project",
    # An empty config: the project's (jest.config.*, package.json "jest") would name code
    # jest loads in its own process beside the reporter (globalSetup, testSequencer,
    # runner, resolver, reporters).
    "command": (
        "jest --config '{}' --ci --maxWorkers=2 --cacheDirectory=\"$TEST_HOME/jest-cache\" "
        f"--reporters={HARNESS_DIR}/jest_reporter.cjs --reporters=default --runTestsByPath"
    ),
}
_MOCHA = {
    "runner": "mocha",
    "before_run": "",
    "sentinel_how": "through a plain throw (no import: the file may be CommonJS or an ES module)",
    "sentinel": 'it("%s", function () { if (%d + %d !== %d) throw new Error("sentinel"); });',
    "sentinel_module": ".test.cjs",
    # No .mocharc or package.json "mocha" key is read: a --require'd module would run in
    # mocha's own process, beside the reporter. Debian's mocha, by absolute path.
    "run_how": "in mocha's parallel mode (its workers run the files; its own process only reports)",
    "command": (
        "/usr/bin/mocha --no-config --no-package --parallel --jobs 2 --timeout 20000 "
        f"--reporter {HARNESS_DIR}/mocha_reporter.cjs"
    ),
}
_VITEST = {
    "runner": "vitest",
    "sentinel_how": "through vitest's own test and expect (the harness config's globals)",
    "sentinel": 'test("%s", () => { expect(%d + %d).toBe(%d); });',
    "sentinel_module": ".test.js",
    "run_how": "in forked workers (never vitest's own process, where the reporter signs)",
    # The harness config, never the project's (see vitest.config.cjs); it runs exactly the
    # files listed in TRAJ2ENV_TEST_FILES. The reporter checks the pool: vitest before 0.34
    # had no --pool and would run the files in threads of its own process.
    "command": (
        'TRAJ2ENV_TEST_FILES="$(printf \'%s\\n\' "$SENTINEL_MODULE" "${TEST_FILES[@]}")" node "$VITEST" run '
        f"--config {HARNESS_DIR}/vitest.config.cjs --root {WORKSPACE} --pool=forks "
        f"--reporter={HARNESS_DIR}/vitest_reporter.mjs --reporter=default"
    ),
}
# Vitest comes from the project's node_modules, restored from the image's pristine copy over
# whatever the submission held and root's, read-only, for the run (it cannot run from that
# copy in place: the test files would import another vitest, from /workspace, and vitest
# needs one instance). A link on the way to it (the submission's own, owned by the test
# user) could be pointed elsewhere while vitest still loads its modules: then it does not run.
_VITEST_ENTRY_CHECK = """VITEST={entry}
if [ "$(realpath -e -- "$VITEST" 2>/dev/null)" != "$VITEST" ]; then
  echo "vitest not run: $VITEST is missing or reached through a link" > "$LOGS/vitest-entry.txt"
  VITEST=/nonexistent/vitest.mjs
fi
"""

"""A repair candidate as a Harbor ``TaskSpec``: environment, reference fix and verifier.

The verifier tracks the tests the trajectory recorded as failing. Check output names
them in each runner's own words; this module turns them into the verifier's ids:

- pytest node ids are used as they are;
- unittest ids (``pkg.module.Class.test``) become pytest node ids
  (``pkg/module.py::Class::test``), since pytest runs unittest cases natively;
- ``node --test`` names (TAP ``not ok N - name``, also behind ``npm test``) become
  ``<test file>::<name>``, the file being the project test file that declares the name.

Dependencies are installed at build time from what the project declares, pinned to the
trajectory's date: npm with ``--before``, Python packages with uv's ``--exclude-newer``.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from datetime import datetime

from traj2env_assets.families.repair.candidates import RepairCandidate
from traj2env_assets.families.repair.instruction import repair_instruction
from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec

_NODE_TEST_SCRIPT = re.compile(r"^\s*node\s+--test(\s+[^|;&<>]*)?\s*$")
_JS_TEST_FILE = re.compile(r"(^|/)(test|tests|__tests__)/.*\.[cm]?js$|\.test\.[cm]?js$|-test\.[cm]?js$|_test\.[cm]?js$")
_REQUIREMENTS = re.compile(r"^requirements[\w.-]*\.txt$")


class UnverifiableCheck(ValueError):
    """The check's failures cannot be tied to test ids the verifier can track."""


class DependenciesNotInstallable(ValueError):
    """The check needs a manifest (package.json) the replay never saw, so its
    dependencies cannot be installed in the image."""


def check_manifest(candidate: RepairCandidate) -> str | None:
    """The manifest a Node check needs, or None for Python checks."""
    if candidate.check.language != "node":
        return None
    return posixpath.join(candidate.cwd, "package.json") if candidate.cwd else "package.json"


def require_manifest(candidate: RepairCandidate) -> None:
    manifest = check_manifest(candidate)
    if manifest is not None and manifest not in candidate.project_files:
        lost = " (lost in the replay)" if manifest in candidate.lost_files else " (never shown in the trajectory)"
        raise DependenciesNotInstallable(
            f"`{candidate.check.command.strip()}` needs {manifest}{lost} and the packages it declares; "
            "they cannot be installed without it"
        )


def _unittest_to_pytest(test_id: str, files: set[str]) -> str | None:
    parts = test_id.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = "/".join(parts[:cut]) + ".py"
        if module in files:
            return "::".join([module, *parts[cut:]])
    return None


def _node_test_file(name: str, files: dict[str, str]) -> str | None:
    quoted = (f'"{name}"', f"'{name}'", f"`{name}`")
    matches = [path for path, text in sorted(files.items()) if _JS_TEST_FILE.search(path) and any(q in text for q in quoted)]
    return matches[0] if len(matches) == 1 else None


def _node_test_runner(candidate: RepairCandidate) -> bool:
    check = candidate.check
    if check.tool == "node-test":
        return True
    return check.tool == "npm" and bool(check.script_body and _NODE_TEST_SCRIPT.match(check.script_body))


def _within_check_dir(candidate: RepairCandidate, targets: list[str]) -> list[str]:
    """The check's own targets relative to the project root ("." = everything it would run)."""
    cwd = candidate.cwd
    if not targets:
        return [cwd or "."]
    return [posixpath.normpath(posixpath.join(cwd, target)) if cwd else target for target in targets]


def _node_test_files(candidate: RepairCandidate) -> list[str]:
    """The files ``node --test`` runs: its explicit targets, else the project's test files."""
    explicit = [target for target in candidate.check.targets if target in candidate.project_files]
    if explicit:
        return _within_check_dir(candidate, explicit)
    prefix = f"{candidate.cwd}/" if candidate.cwd else ""
    return sorted(
        path for path in candidate.project_files
        if path.startswith(prefix) and "node_modules/" not in path and _JS_TEST_FILE.search(path)
    )


def tracked_test_spec(candidate: RepairCandidate) -> VerifierSpec:
    """The verifier runs the recorded check's tests; every one must pass and the recorded
    failures must be among them (reward mode ``check``)."""
    files = candidate.project_files
    tool = candidate.check.tool
    python_targets = _within_check_dir(candidate, candidate.check.targets if tool == "pytest" else [])
    if tool == "pytest" and candidate.failing_ids and all("::" in test_id for test_id in candidate.failing_ids):
        return VerifierSpec(
            runner="pytest", tracked_test_ids=_within_check_dir(candidate, candidate.failing_ids),
            pytest_config=_pytest_config(files), run_targets=python_targets, reward="check",
        )
    if tool == "unittest" and candidate.failing_ids:
        converted = [_unittest_to_pytest(test_id, set(files)) for test_id in candidate.failing_ids]
        if all(converted):
            return VerifierSpec(
                runner="pytest", tracked_test_ids=converted, pytest_config=_pytest_config(files),  # type: ignore[arg-type]
                run_targets=python_targets, reward="check",
            )
    if _node_test_runner(candidate) and candidate.failing_ids:
        located = [(_node_test_file(name, files), name) for name in candidate.failing_ids]
        if all(path for path, _ in located):
            return VerifierSpec(
                runner="node", tracked_test_ids=[f"{path}::{name}" for path, name in located],
                run_targets=_node_test_files(candidate), reward="check",
            )
    raise UnverifiableCheck(
        f"{candidate.check.tool} check: no failing test ids that the verifier can track "
        f"(recorded: {', '.join(candidate.failing_ids[:5]) or 'none'})"
    )


def _pytest_config(files: dict[str, str]) -> str | None:
    for name in ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
        if name in files and (name == "pytest.ini" or "pytest" in files[name]):
            return name
    return None


def trajectory_date(timestamp: str | None) -> str | None:
    """The failing run's date (UTC, ``YYYY-MM-DD``) that dependencies are pinned to."""
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        return None


def dependency_lines(candidate: RepairCandidate) -> list[str]:
    """Dockerfile lines installing what the project declares, pinned to the trajectory's date."""
    files = candidate.project_files
    date = trajectory_date(candidate.timestamp)
    lines: list[str] = []
    if candidate.check.language == "python":
        # The public python image has no pytest; the offline stand-in has it, so this
        # installs nothing there and a pinned pytest everywhere else.
        pin = f" --exclude-newer {date}" if date else ""
        requirements = sorted(path for path in files if "/" not in path and _REQUIREMENTS.match(path))
        install = (
            "python3 -m pip install --no-cache-dir --break-system-packages uv && "
            f"uv pip install --system --break-system-packages{pin} pytest"
            + "".join(f" -r /tmp/deps/{path}" for path in requirements)
        )
        if requirements:
            lines.append("COPY " + " ".join(f"workspace/{path}" for path in requirements) + " /tmp/deps/")
            lines.append(f"RUN {install}")
        else:
            lines.append(f'RUN python3 -c "import pytest" 2>/dev/null || ({install})')
        return lines
    package_dir = candidate.cwd
    manifest = posixpath.join(package_dir, "package.json") if package_dir else "package.json"
    try:
        package = json.loads(files.get(manifest, "{}"))
    except ValueError:
        package = {}
    if isinstance(package, dict) and (package.get("dependencies") or package.get("devDependencies")):
        lock = posixpath.join(package_dir, "package-lock.json") if package_dir else "package-lock.json"
        before = f" --before={date}" if date else ""
        target = posixpath.join("/workspace", package_dir)
        sources = [f"workspace/{manifest}"] + ([f"workspace/{lock}"] if lock in files else [])
        install = "npm ci" if lock in files else "npm install"
        lines.append(f"COPY {' '.join(sources)} {target}/")
        lines.append(f"RUN cd {shlex.quote(target)} && {install} --no-audit --no-fund{before}")
    return lines


def repair_task_spec(candidate: RepairCandidate, source_trace: str, source_model: str | None, org: str) -> TaskSpec:
    require_manifest(candidate)
    return TaskSpec(
        family="repair",
        task_id=candidate.task_id,
        org=org,
        instruction=repair_instruction(candidate),
        base_image="python" if candidate.check.language == "python" else "node",
        dependency_lines=dependency_lines(candidate),
        project_files={path: content.encode() for path, content in candidate.project_files.items()},
        solution_files={path: content.encode() for path, content in candidate.fixed_files.items()},
        solution_deleted=candidate.deleted_files,
        tests=tracked_test_spec(candidate),
        source_trace=source_trace,
        source_model=source_model,
        tags=[candidate.check.tool, candidate.check.kind],
    )

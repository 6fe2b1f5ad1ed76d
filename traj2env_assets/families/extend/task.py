"""An extend candidate as a Harbor ``TaskSpec``.

The environment is the base project (its tests included) with the dependencies it
declares installed offline from the workspace's wheelhouse (``dependencies.python_environment``,
as for repair; one that does not resolve into wheels is ``dependencies_not_installable``);
``solution/solve.sh`` writes
the reference's changed source files. The hidden tests are the test files and test
harness files request k+1 added or changed; in ``llm`` mode the model's test module
instead of the request's test modules. The verifier's reward mode is ``split``: the share of new tests passed, 0 when
any existing test fails. A candidate without a single new test is ``no_new_tests`` (the
rest of the strength floor is judged in the image: ``strength``).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from traj2env_assets.conventions import PYTHON_HARNESS_FILES, is_python_test_module, is_test_path
from traj2env_assets.dependencies import DependenciesNotInstallable, python_environment
from traj2env_assets.families.build.task import left_out_note
from traj2env_assets.families.contract import CandidateRejected, TaskSource
from traj2env_assets.families.extend.candidates import ExtendCandidate
from traj2env_assets.families.extend.contract_text import recorded_contract
from traj2env_assets.families.extend.proposal import ExtendProposal
from traj2env_assets.families.extend.pytests import test_functions
from traj2env_assets.families.extend.strength import no_tests
from traj2env_assets.families.repair.task import pytest_config_path
from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec


def _is_test_support(path: str) -> bool:
    return is_test_path(path) or PurePosixPath(path).name in PYTHON_HARNESS_FILES


def proposal_test_path(candidate: ExtendCandidate) -> str:
    """Where the model's test module goes: a new file beside the project's tests."""
    taken = set(candidate.reference_files) | set(candidate.base_files)
    directory = (
        "test"
        if any(p.startswith("test/") for p in taken) and not any(p.startswith("tests/") for p in taken)
        else "tests"
    )
    path, suffix = f"{directory}/test_request_{candidate.request_number}.py", 1
    while path in taken:
        suffix += 1
        path = f"{directory}/test_request_{candidate.request_number}_{suffix}.py"
    return path


def hidden_tests(candidate: ExtendCandidate, proposal: ExtendProposal | None) -> tuple[dict[str, str], list[str]]:
    """The test files restored over the submission and the new (tracked) test ids."""
    hidden = {path: text for path, text in candidate.changed_files.items() if _is_test_support(path)}
    if proposal is None:
        return hidden, list(candidate.recorded_new_tests)
    # The model's module replaces the session's test modules; the test support the request
    # changed (conftest.py, fixtures, data) stays, the base's test modules stay as they were.
    hidden = {path: text for path, text in hidden.items() if not is_python_test_module(path)}
    path = proposal_test_path(candidate)
    hidden[path] = proposal.test_module
    return hidden, sorted(test_functions(path, proposal.test_module))


def instruction(candidate: ExtendCandidate, contract: str) -> str:
    note = f"\n{left_out_note(candidate.left_out_files)}\n" if candidate.left_out_files else ""
    return (
        f"{candidate.statement}\n\n"
        "## Contract\n\n"
        f"{contract.strip() or '(no public interface change)'}\n\n"
        "The project is in /workspace. Implement the request there; keep the project's "
        "existing behaviour (its tests must keep passing). Hidden tests check the new "
        f"behaviour.\n{note}"
    )


def extend_task_spec(candidate: ExtendCandidate, proposal: ExtendProposal | None, source: TaskSource) -> TaskSpec:
    hidden, new_tests = hidden_tests(candidate, proposal)
    origin = "the model's test module" if proposal else "tests the session added and saw pass"
    if (detail := no_tests(len(new_tests), origin)) is not None:
        raise CandidateRejected("no_new_tests", detail)
    wheelhouse = Path(source.wheelhouse_dir) if source.wheelhouse_dir else None
    try:
        environment = python_environment(candidate.base_files, candidate.timestamp, wheelhouse)
    except DependenciesNotInstallable as exc:
        raise CandidateRejected("dependencies_not_installable", str(exc)) from exc
    existing = [test_id for test_id in candidate.recorded_existing_tests if test_id not in new_tests]
    contract = (
        proposal.contract
        if proposal
        else recorded_contract(candidate.base_files, candidate.changed_files, candidate.deleted_files)
    )
    return TaskSpec(
        family="extend",
        task_id=candidate.task_id,
        org=source.org,
        instruction=instruction(candidate, contract),
        base_image="python",
        dependency_lines=environment.lines,
        context_files=environment.context_files,
        project_files={path: text.encode() for path, text in candidate.base_files.items()},
        solution_files={
            path: text.encode() for path, text in candidate.changed_files.items() if not _is_test_support(path)
        },
        solution_deleted=[path for path in candidate.deleted_files if not _is_test_support(path)],
        tests=VerifierSpec(
            runner="pytest",
            tracked_test_ids=new_tests,
            gate_test_ids=existing,
            test_files=hidden,
            pytest_config=pytest_config_path(candidate.base_files),
            reward="split",
        ),
        source_trace=source.partition_key,
        source_model=source.source_model,
        tags=["extend", "recorded" if proposal is None else "llm"],
    )

"""A build candidate as a Harbor ``TaskSpec``: the start state and the contract, the reference,
and the hidden tests.

The hidden tests come from the model (``llm`` mode: ``tests/test_hidden.py``) or from the
session (``recorded`` mode: the test modules it wrote and saw pass, with their support
files such as ``conftest.py``). The verifier restores them over the submission and the
reward is the fraction of the tracked tests that pass; calibration later narrows the
tracked tests to the ones it kept (``calibrated_spec``).
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict

from traj2env_assets.conventions import PYTHON_HARNESS_FILES, is_python_test_module, is_test_path
from traj2env_assets.dependencies.requirements import python_dependency_lines, requirement_files, trajectory_date
from traj2env_assets.families.build.candidates import BuildCandidate
from traj2env_assets.families.build.proposal import BuildProposal, proposal_problem
from traj2env_assets.families.build.surface import recorded_contract, stub_files
from traj2env_assets.families.contract import CandidateRejected, TaskSource
from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec

HIDDEN_TESTS = "tests/test_hidden.py"
CONTRACT_FILE = "CONTRACT.md"
Mode = Literal["llm", "recorded"]


class BuildMaterials(BaseModel):
    """What a candidate's task is made of, in either mode."""

    model_config = ConfigDict(extra="forbid")

    mode: Mode
    contract: str
    stubs: dict[str, str]
    test_files: dict[str, str]
    """Hidden test modules and their support files, restored over every submission."""
    test_modules: list[str]


def _support_files(files: dict[str, str]) -> dict[str, str]:
    """Test support the session's tests may need: conftest.py files and non-module test files."""
    return {
        path: text
        for path, text in files.items()
        if PurePosixPath(path).name == "conftest.py" or (is_test_path(path) and not is_python_test_module(path))
    }


def build_materials(candidate: BuildCandidate, proposal: BuildProposal | None) -> BuildMaterials:
    sources = candidate.python_sources()
    if proposal is None:
        if not candidate.session_tests:
            raise CandidateRejected(
                "no_session_tests", "no test module the session wrote was seen passing (and left unchanged)"
            )
        tests = {path: candidate.reference_files[path] for path in candidate.session_tests}
        return BuildMaterials(
            mode="recorded",
            contract=recorded_contract(sources),
            stubs=stub_files(sources),
            test_files={**_support_files(candidate.reference_files), **tests},
            test_modules=candidate.session_tests,
        )
    problem = proposal_problem(proposal, sources)
    if problem:
        raise CandidateRejected("llm_declined", problem)
    # A module the model left out gets the stub made with ast.
    stubs = {**stub_files(sources), **{item.path: item.content for item in proposal.stub_files}}
    return BuildMaterials(
        mode="llm",
        contract=proposal.contract,
        stubs=stubs,
        test_files={HIDDEN_TESTS: proposal.tests},
        test_modules=[HIDDEN_TESTS],
    )


def declared_test_ids(path: str, source: str) -> list[str]:
    """pytest node ids of a module's test functions and test-class methods (before parametrisation)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    ids = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            ids.append(f"{path}::{node.name}")
        elif isinstance(node, ast.ClassDef):
            methods = [
                child.name
                for child in node.body
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and child.name.startswith("test")
            ]
            ids += [f"{path}::{node.name}::{method}" for method in methods]
    return ids


def _solution(candidate: BuildCandidate, environment: dict[str, str]) -> dict[str, str]:
    """The reference as solve.sh restores it: no tests, no test harness configuration, nothing
    the environment already has."""
    return {
        path: text
        for path, text in candidate.reference_files.items()
        if not is_test_path(path)
        and PurePosixPath(path).name not in PYTHON_HARNESS_FILES
        and environment.get(path) != text
    }


def left_out_note(paths: list[str]) -> str:
    """The sentence a task carries when files the session wrote are not part of it."""
    return f"Files the session wrote but the log does not show in full were left out: {', '.join(paths)}."


def instruction(request: str, contract: str, left_out: list[str]) -> str:
    note = f"\n\n{left_out_note(left_out)}" if left_out else ""
    return (
        f"{request.strip()}\n\n---\n\nBuild this in the project root. Hidden tests check the behaviour "
        f"of the interface below (also in `{CONTRACT_FILE}`); keep its module paths, names and "
        f"signatures exactly.{note}\n\n## Interface contract\n\n{contract.strip()}\n"
    )


def build_task_spec(candidate: BuildCandidate, materials: BuildMaterials, source: TaskSource) -> TaskSpec:
    requirements = requirement_files(candidate.reference_files)
    environment = {
        **candidate.start_files,
        **{path: candidate.reference_files[path] for path in requirements},
        CONTRACT_FILE: materials.contract.strip() + "\n",
    }
    test_ids = [
        test_id for path in materials.test_modules for test_id in declared_test_ids(path, materials.test_files[path])
    ]
    if not test_ids:
        raise CandidateRejected("no_session_tests", "the hidden test modules declare no test")
    solution = _solution(candidate, environment)
    return TaskSpec(
        family="build",
        task_id=candidate.task_id,
        org=source.org,
        instruction=instruction(candidate.request, materials.contract, candidate.left_out_files),
        base_image="python",
        dependency_lines=python_dependency_lines(environment, trajectory_date(candidate.timestamp)),
        project_files={path: text.encode() for path, text in environment.items()},
        solution_files={path: text.encode() for path, text in solution.items()},
        solution_deleted=sorted(
            path
            for path in candidate.start_files
            if path not in candidate.reference_files
            and not is_test_path(path)
            and PurePosixPath(path).name not in PYTHON_HARNESS_FILES
        ),
        tests=VerifierSpec(
            runner="pytest", tracked_test_ids=test_ids, test_files=materials.test_files, reward="fraction"
        ),
        source_trace=source.partition_key,
        source_model=source.source_model,
        tags=[materials.mode],
    )

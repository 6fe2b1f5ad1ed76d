"""A check is read as it was recorded: the directory it ran in, the import paths its
command implies, Windows spellings; a run that never ran to its end is no evidence; a
test file that failed to import is a failing unit."""

from __future__ import annotations

import pytest

from traj2env_assets.checks import (
    image_argv,
    image_pythonpath,
    parse_check_result,
    recognise_check,
)

ROOT = "/home/dev/proj"
SNAPSHOT = {
    "pyproject.toml": "[project]\nname = 'proj'\n",
    "src/proj/__init__.py": "",
    "tools/pyproject.toml": "[project]\nname = 'tools'\n",
    "tools/tools/__init__.py": "",
}


@pytest.mark.parametrize(
    ("command", "cwd", "argv", "check_cwd", "import_paths"),
    [
        # The pytest script does not put its directory on sys.path; PYTHONPATH does.
        ("pytest -q", "", ["pytest", "-q"], "", []),
        ("PYTHONPATH=. pytest -q", "", ["pytest", "-q"], "", ["."]),
        ("PYTHONPATH=src:lib pytest", "", ["pytest"], "", ["src", "lib"]),
        ("env PYTHONPATH=. pytest -q", "", ["pytest", "-q"], "", ["."]),
        ("export PYTHONPATH=$(pwd)/src && pytest", "", ["pytest"], "", ["src"]),
        # Entries outside the project, or not known, are dropped; absolute ones inside kept.
        ("PYTHONPATH=src:$PYTHONPATH:/opt/lib pytest", "", ["pytest"], "", ["src"]),
        (f"PYTHONPATH={ROOT}/src pytest", "", ["pytest"], "", ["src"]),
        ("PYTHONPATH=../.. pytest", "tools", ["pytest"], "tools", []),
        # python -m puts its working directory first; -I and -P do not, -I ignores PYTHONPATH.
        ("python -m pytest", "", ["python", "-m", "pytest"], "", ["."]),
        ("cd tools && python3 -m pytest tests", "", ["python3", "-m", "pytest", "tests"], "tools", ["tools"]),
        ("python -P -m pytest", "", ["python", "-P", "-m", "pytest"], "", []),
        ("PYTHONPATH=src python -I -m pytest", "", ["python", "-I", "-m", "pytest"], "", []),
        # A recorded cwd below the root, and a cd, both relative to the project root.
        ("PYTHONPATH=. pytest", "tools", ["pytest"], "tools", ["tools"]),
        (f"cd {ROOT}/tools && pytest -q", "", ["pytest", "-q"], "tools", []),
        # Runners that install the project: its src/ layout, else its folder.
        ("uv run pytest -q", "", ["pytest", "-q"], "", ["src"]),
        ("cd tools && poetry run pytest", "", ["pytest"], "tools", ["tools"]),
        ("timeout 60 pytest -q", "", ["pytest", "-q"], "", []),
        # Windows spellings.
        ('$env:PYTHONPATH="."; pytest -q', "", ["pytest", "-q"], "", ["."]),
        ("set PYTHONPATH=src && pytest", "", ["pytest"], "", ["src"]),
        ("py -m pytest tests\\test_calc.py", "", ["py", "-m", "pytest", "tests/test_calc.py"], "", ["."]),
    ],
)
def test_what_the_recorded_command_implies(
    command: str, cwd: str, argv: list[str], check_cwd: str, import_paths: list[str]
) -> None:
    check = recognise_check(command, SNAPSHOT, cwd=cwd, project_root=ROOT)
    assert check is not None and check.tool == "pytest"
    assert (check.argv, check.cwd, check.import_paths) == (argv, check_cwd, import_paths)


def test_the_image_runs_the_check_with_its_import_paths_and_a_python_it_has() -> None:
    check = recognise_check("PYTHONPATH=src py -m pytest tests\\test_calc.py::test_add", SNAPSHOT, project_root=ROOT)
    assert check is not None and check.targets == ["tests/test_calc.py::test_add"]
    assert image_argv(check) == ["python3", "-m", "pytest", "tests/test_calc.py::test_add"]
    assert image_pythonpath(check, "/workspace") == "/workspace:/workspace/src"
    plain = recognise_check("pytest -q", SNAPSHOT)
    assert plain is not None and image_pythonpath(plain, "/workspace") is None


PYTEST = recognise_check("pytest -q", {})
FAILED_RUN = "..F\nFAILED tests/test_calc.py::test_add - assert 1 == 2\n1 failed, 2 passed in 0.05s\n"
SANDBOX = "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: {code}, stdout: "


@pytest.mark.parametrize(
    ("output", "exit_code"),
    [
        (FAILED_RUN, 124),
        (FAILED_RUN, 137),
        (FAILED_RUN, -9),
        ("command timed out after 120000 milliseconds\n..F\nFAILED tests/test_calc.py::test_add", None),
        ("Command timed out after 2m 0.0s\n..F", 1),
        ("Error: Command timed out after 2m 0.0s\n..F\nFAILED tests/test_calc.py::test_add", None),
        ("Exit code 143\nCommand timed out after 2m 0s\n..F", None),
        ("..F\nbash: line 1:  4242 Killed                  pytest -q\n", 1),
        ("..F\nTerminated\n", None),
        (FAILED_RUN + "Process exited with code 137", None),
        ("exec command rejected by user", None),
        # Codex's sandbox wrapper with the sandbox's own words, or with no runner summary.
        (SANDBOX.format(code=1) + ", stderr: bash: pytest: Operation not permitted", None),
        (
            SANDBOX.format(code=1) + "..F\nE   PermissionError: [Errno 13] Permission denied: '/home/dev/.cache'\n"
            "FAILED tests/test_calc.py::test_add\n1 failed in 0.05s, stderr: ",
            None,
        ),
        (SANDBOX.format(code=1) + "..F, stderr: ", None),
    ],
)
def test_a_run_that_never_ran_to_its_end_is_no_evidence(output: str, exit_code: int | None) -> None:
    assert PYTEST is not None
    result = parse_check_result(PYTEST, output, exit_code)
    assert (result.outcome, result.failing_ids) == ("unknown", [])
    assert result.not_run


def test_a_complete_run_inside_codex_sandbox_wrapper_is_a_run() -> None:
    # Codex's legacy sandbox puts the wrapper on every command exiting non-zero: the
    # runner's own closing summary says the run went to its end.
    assert PYTEST is not None
    result = parse_check_result(PYTEST, SANDBOX.format(code=1) + FAILED_RUN + ", stderr: ", None)
    assert (result.outcome, result.failing_ids, result.not_run) == ("failed", ["tests/test_calc.py::test_add"], None)


def test_a_failing_test_that_prints_timed_out_is_still_a_failure() -> None:
    assert PYTEST is not None
    output = "FAILED tests/test_net.py::test_fetch - TimeoutError: request timed out after 5s\n1 failed in 5.10s\n"
    result = parse_check_result(PYTEST, output, 1)
    assert (result.outcome, result.failing_ids) == ("failed", ["tests/test_net.py::test_fetch"])


def test_files_that_failed_to_import_are_failing_units() -> None:
    assert PYTEST is not None
    summary = (
        "==================================== ERRORS ====================================\n"
        "_____________________ ERROR collecting tests/test_calc.py ______________________\n"
        "tests/test_calc.py:1: in <module>\n    from pkg.calc import add\nE   NameError: name 'x' is not defined\n"
        "_____________________ ERROR collecting tests/test_more.py ______________________\n"
        "E   NameError: name 'x' is not defined\n"
    )
    with_summary = summary + (
        "=========================== short test summary info ============================\n"
        "ERROR tests/test_calc.py - NameError: name 'x' is not defined\nERROR tests/test_more.py\n"
        "!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!\n2 errors in 0.12s\n"
    )
    for output in (with_summary, summary + "2 errors in 0.12s\n"):
        result = parse_check_result(PYTEST, output, 2)
        assert (result.outcome, result.failing_ids) == ("failed", ["tests/test_calc.py", "tests/test_more.py"])


def test_what_each_file_that_failed_to_import_raised() -> None:
    assert PYTEST is not None
    output = (
        "_____________________ ERROR collecting tests/test_a.py ______________________\n"
        "schema.py:17: in <module>\nE   json.decoder.JSONDecodeError: Expecting ',' delimiter\n"
        "_____________________ ERROR collecting tests/test_b.py ______________________\n"
        "E   FileNotFoundError: [Errno 2] No such file or directory: 'schemas/x.json'\n"
        "ERROR tests/test_c.py - ModuleNotFoundError: No module named 'pkg'\n2 errors in 0.1s\n"
    )
    result = parse_check_result(PYTEST, output, 2)
    assert result.import_errors == {
        "tests/test_a.py": "JSONDecodeError",
        "tests/test_b.py": "FileNotFoundError",
        "tests/test_c.py": "ModuleNotFoundError",
    }

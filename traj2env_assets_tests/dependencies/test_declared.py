"""The Python requirements a project declares, from its files as the replay rebuilt them."""

from __future__ import annotations

from traj2env_assets.dependencies import declared_requirements


def test_requirements_files_follow_includes_and_skip_options_paths_and_editables() -> None:
    files = {
        "requirements.txt": "# runtime\nattrs>=23  # inline\n-r requirements-extra.txt\n--index-url https://x\n-e .\n./local\n",
        "requirements-extra.txt": "python-dateutil==2.9.0.post0\n",
        "sub/requirements.txt": "ignored-because-not-root\n",
    }
    # Every root requirements file counts (sorted by name); an included one counts once.
    assert declared_requirements(files) == ["python-dateutil==2.9.0.post0", "attrs>=23"]


def test_pyproject_dependencies_with_test_extras_and_groups_but_not_the_project_itself() -> None:
    pyproject = """
[project]
name = "My_Pkg"
dependencies = ["attrs>=23.1", "tomli; python_version < '3.11'"]
[project.optional-dependencies]
test = ["pytest>=8", "my-pkg[extra]"]
docs = ["sphinx"]
[dependency-groups]
dev = ["ruff", {include-group = "test"}]
"""
    assert declared_requirements({"pyproject.toml": pyproject}) == [
        "attrs>=23.1",
        'tomli; python_version < "3.11"',
        "pytest>=8",
        "ruff",
    ]


def test_setup_cfg_install_requires_and_test_extras() -> None:
    setup_cfg = """
[metadata]
name = demo
[options]
install_requires =
    requests>=2
    six
[options.extras_require]
test =
    pytest
"""
    assert declared_requirements({"setup.cfg": setup_cfg}) == ["requests>=2", "six", "pytest"]


def test_unreadable_manifests_declare_nothing() -> None:
    assert declared_requirements({"pyproject.toml": "[project\n", "setup.cfg": "no section\n"}) == []

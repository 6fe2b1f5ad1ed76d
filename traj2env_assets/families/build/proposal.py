"""The ``llm`` mode's reply: an interface contract, behaviour-free stubs and candidate tests."""

from __future__ import annotations

import ast

from pydantic import BaseModel, ConfigDict, Field

from traj2env_assets.families.build.candidates import BuildCandidate

MAX_PROMPT_CHARS = 150_000
PROMPT = "build_contract"


class ProposedFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Path relative to the project root, e.g. `calc/core.py`.")
    content: str


class BuildProposal(BaseModel):
    model_config = ConfigDict(extra="forbid")

    contract: str = Field(description="Markdown: public modules, names, signatures and behaviours.")
    stub_files: list[ProposedFile] = Field(
        description="Every Python module of the project with the same public names and signatures; "
        "every function body only raises NotImplementedError."
    )
    tests: str = Field(description="One pytest module, saved as tests/test_hidden.py.")


def project_listing(candidate: BuildCandidate) -> str:
    """The project as the prompt shows it: every file in a fenced block under its path."""
    return "\n".join(f"### {path}\n\n````\n{text}\n````\n" for path, text in sorted(candidate.reference_files.items()))


def prompt_chars(candidate: BuildCandidate) -> int:
    return len(candidate.request) + len(project_listing(candidate))


def proposal_problem(proposal: BuildProposal, sources: dict[str, str]) -> str | None:
    """Why a syntactically valid reply cannot be used, or None."""
    try:
        tests = ast.parse(proposal.tests)
    except SyntaxError as exc:
        return f"the tests do not parse: {exc}"
    if not any(isinstance(node, ast.FunctionDef) and node.name.startswith("test") for node in ast.walk(tests)):
        return "the reply has no test function"
    stubbed = {item.path for item in proposal.stub_files}
    unknown = sorted(stubbed - set(sources))
    if unknown:
        return f"stub files for modules the project does not have: {', '.join(unknown)}"
    for item in proposal.stub_files:
        try:
            ast.parse(item.content)
        except SyntaxError as exc:
            return f"the stub of {item.path} does not parse: {exc}"
    return None

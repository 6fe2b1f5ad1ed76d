"""The model's qa proposal and the grounding checks it must pass before any pinning.

Skip reasons (exact strings, raised as :class:`CandidateRejected`):
- ``llm_declined``: the proposal holds no question;
- ``invalid_gold_answer``: the gold answer does not fit its kind (a number that is not
  a finite decimal, a yes/no that is neither, an empty list item...);
- ``cited_output_not_found``: the cited output is not part of the candidate's tool output;
- ``answer_not_in_cited_output``: the gold answer (each item, for a list) is not verbatim
  in the cited output, as a whole token;
- ``answer_in_question``: the question gives the answer away (the answer, or every list
  item, appears in it; yes/no answers are exempt);
- ``invalid_inputs``: no input file, a repository that is not ``owner/name``, a path
  that is not a plain relative path, or two inputs with the same file name (each lands
  in ``/workdir/data/<file name>``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict

from traj2env_assets.families.contract import CandidateRejected
from traj2env_assets.harbor.task_spec import AnswerKind
from traj2env_assets.verification.verifier_files.grade_answer import GoldError, check_gold, normalize_label

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


class QaQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str
    answer: str
    answer_kind: AnswerKind


class QaInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repo_id: str
    """The dataset repository, ``owner/name``."""
    path: str
    """The file's path inside the repository."""

    @property
    def file_name(self) -> str:
        return PurePosixPath(self.path).name


class QaProposal(BaseModel):
    """The reply the ``propose`` prompt asks for (strict JSON schema)."""

    model_config = ConfigDict(extra="forbid")

    questions: list[QaQuestion]
    """The first is the task's question; its answer is the gold answer."""
    cited_output: str
    inputs: list[QaInput]
    reference_solution: str
    """A Python program that reads /workdir/data/<file name> and prints only the answer."""


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def _token(text: str) -> re.Pattern[str]:
    """``text`` as a whole token: not glued to letters, digits, a sign or a decimal point."""
    return re.compile(rf"(?<![\w.+-]){re.escape(text)}(?![\w]|\.\d)")


def _answer_parts(question: QaQuestion) -> list[str]:
    answer = question.answer.strip()
    if question.answer_kind == "list":
        return [item.strip() for item in answer.split(",")]
    return [answer]


def check_inputs(inputs: list[QaInput]) -> None:
    if not inputs:
        raise CandidateRejected("invalid_inputs", "the proposal names no input file")
    names: set[str] = set()
    for item in inputs:
        pure = PurePosixPath(item.path)
        if not _REPO_ID.match(item.repo_id):
            raise CandidateRejected("invalid_inputs", f"{item.repo_id!r} is not a dataset repository id (owner/name)")
        if not item.path or pure.is_absolute() or ".." in pure.parts or item.path != pure.as_posix():
            raise CandidateRejected("invalid_inputs", f"{item.path!r} is not a plain relative path in the repository")
        if item.file_name in names:
            raise CandidateRejected("invalid_inputs", f"two inputs share the file name {item.file_name!r}")
        names.add(item.file_name)


def ground(output: str, proposal: QaProposal) -> QaQuestion:
    """The task's question once every grounding check passed; raises CandidateRejected."""
    if not proposal.questions:
        raise CandidateRejected("llm_declined", "the proposal holds no question")
    question = proposal.questions[0]
    try:
        check_gold(question.answer_kind, question.answer)
    except GoldError as exc:
        raise CandidateRejected("invalid_gold_answer", str(exc)) from exc
    cited = proposal.cited_output
    if not cited.strip() or _squeezed(cited) not in _squeezed(output):
        raise CandidateRejected("cited_output_not_found", "the cited output is not part of the candidate's tool output")
    missing = [part for part in _answer_parts(question) if not _token(part).search(cited)]
    if missing:
        raise CandidateRejected(
            "answer_not_in_cited_output", f"not verbatim in the cited output: {', '.join(missing)[:200]}"
        )
    if question.answer_kind != "yes_no":
        asked = normalize_label(question.question)
        if all(_token(normalize_label(part)).search(asked) for part in _answer_parts(question)):
            raise CandidateRejected("answer_in_question", f"the question contains the answer {question.answer!r}")
    check_inputs(proposal.inputs)
    return question

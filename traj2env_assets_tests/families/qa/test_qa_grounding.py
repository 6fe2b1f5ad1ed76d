"""Every grounding reason of a qa proposal, before any pinning."""

from __future__ import annotations

from typing import Any

import pytest

from traj2env_assets.families.contract import CandidateRejected
from traj2env_assets.families.qa.proposal import QaProposal, ground

OUTPUT = "16 rows, 4 cities\ncity\nCairo        27.850\nLisbon       20.750\nOslo          8.750\nReykjavik     4.325\nwarmest city: Cairo"
CITED = "Reykjavik     4.325"


def proposal(**changes: Any) -> QaProposal:
    question = {
        "question": "What is the mean daily maximum temperature in Reykjavik (3 decimals)?",
        "answer": "4.325",
        "answer_kind": "number",
    }
    question.update(changes.pop("question", {}))
    fields: dict[str, Any] = {
        "questions": [question],
        "cited_output": CITED,
        "inputs": [{"repo_id": "traj2env-samples/city-temperatures", "path": "data/train.parquet"}],
        "reference_solution": "print('4.325')\n",
    }
    fields.update(changes)
    return QaProposal.model_validate(fields)


def reason(candidate: QaProposal) -> str:
    with pytest.raises(CandidateRejected) as rejected:
        ground(OUTPUT, candidate)
    return rejected.value.drop.reason


def test_a_grounded_proposal_passes() -> None:
    assert ground(OUTPUT, proposal()).answer == "4.325"
    # Whitespace in the citation need not match the output's exactly.
    assert ground(OUTPUT, proposal(cited_output="Reykjavik 4.325")).answer == "4.325"
    listed = proposal(
        question={
            "question": "Which cities average above 20 degrees?",
            "answer": "Cairo, Lisbon",
            "answer_kind": "list",
        },
        cited_output="Cairo        27.850\nLisbon       20.750",
    )
    assert ground(OUTPUT, listed).answer_kind == "list"


def test_no_question_is_llm_declined() -> None:
    assert reason(proposal(questions=[])) == "llm_declined"


@pytest.mark.parametrize(
    ("kind", "answer"), [("number", "4.3 degrees"), ("yes_no", "perhaps"), ("list", "Cairo,,Oslo")]
)
def test_invalid_gold_answer(kind: str, answer: str) -> None:
    assert reason(proposal(question={"answer": answer, "answer_kind": kind})) == "invalid_gold_answer"


def test_cited_output_not_found() -> None:
    assert reason(proposal(cited_output="Reykjavik     4.325 (made up)")) == "cited_output_not_found"
    assert reason(proposal(cited_output="  ")) == "cited_output_not_found"


@pytest.mark.parametrize(
    ("answer", "cited"),
    [
        ("4.32", CITED),  # a prefix of 4.325 is not the value shown
        ("325", CITED),
        ("8.750", CITED),  # in the output, but not in the cited lines
        ("-4.325", CITED),
    ],
)
def test_answer_not_in_cited_output(answer: str, cited: str) -> None:
    assert reason(proposal(question={"answer": answer}, cited_output=cited)) == "answer_not_in_cited_output"


def test_every_list_item_must_be_cited() -> None:
    listed = proposal(
        question={"question": "Which cities average above 8 degrees?", "answer": "Cairo, Oslo", "answer_kind": "list"},
        cited_output="Cairo        27.850",
    )
    assert reason(listed) == "answer_not_in_cited_output"


def test_answer_in_question() -> None:
    leaky = {"question": "Is the Reykjavik mean 4.325, what is it to 3 decimals?"}
    assert reason(proposal(question=leaky)) == "answer_in_question"
    label = {"question": "Which city is warmest, Cairo or not?", "answer": "Cairo", "answer_kind": "label"}
    assert reason(proposal(question=label, cited_output="warmest city: Cairo")) == "answer_in_question"


def test_yes_no_answers_may_be_named_in_the_question() -> None:
    yes_no = {"question": "Answer yes or no: does the output say yes?", "answer": "yes", "answer_kind": "yes_no"}
    assert ground("checked: yes", proposal(question=yes_no, cited_output="checked: yes")).answer == "yes"


@pytest.mark.parametrize(
    "inputs",
    [
        [],
        [{"repo_id": "city-temperatures", "path": "data/train.parquet"}],
        [{"repo_id": "a/b", "path": "../secret.parquet"}],
        [{"repo_id": "a/b", "path": "/etc/passwd"}],
        [{"repo_id": "a/b", "path": ""}],
        [{"repo_id": "a/b", "path": "train/data.parquet"}, {"repo_id": "a/c", "path": "test/data.parquet"}],
    ],
)
def test_invalid_inputs(inputs: list[dict[str, str]]) -> None:
    assert reason(proposal(inputs=inputs)) == "invalid_inputs"

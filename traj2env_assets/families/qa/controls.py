"""The qa trial matrix: the reference, degenerate answers and tampered answer files.

Each control writes ``/workdir/answer.txt`` in the agent's container (or not); only that
file crosses into the verifier. Expected rewards follow the grader's rules
(``verification/verifier_files/grade_answer.py``):

- ``reference`` 1: ``solve.sh`` runs the reference program on the pinned data;
- ``noop`` 0: no answer file; ``empty_answer`` 0: an empty one;
- ``wrong_answer`` 0: an answer of the gold's kind that differs (a number one unit off
  in its last decimal, yes/no flipped, another label, one list item changed);
- ``extra_lines`` 0: the gold answer, then a second line;
- ``utf16_answer`` 0 and ``bom_answer`` 0: the gold answer in UTF-16, and in UTF-8 with
  a byte order mark (other encodings);
- ``crlf_answer`` 1: the gold answer with surrounding spaces and a Windows line end;
- ``link_to_gold`` 0: the answer file is a link to the verifier's own gold file;
- ``forge_reward`` 0: reward files written everywhere (the standing control).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from traj2env_assets.harbor.scripts import GOLD_FILE, HARNESS_DIR
from traj2env_assets.harbor.task_spec import ANSWER_FILE
from traj2env_assets.layout import TaskLayout
from traj2env_assets.verification.controls import (
    AgentAction,
    Control,
    ForgeRewardControl,
    NoopControl,
    ReferenceControl,
)
from traj2env_assets.verification.verifier_files.grade_answer import parse_decimal


def gold_of(task_dir: Path) -> tuple[str, str]:
    """The staged task's (kind, gold answer), read on the host (never in the agent's container)."""
    gold = json.loads(TaskLayout(task_dir).harness_file(GOLD_FILE).read_text(encoding="utf-8"))
    return gold["kind"], gold["answer"]


def _wrong_item(item: str) -> str:
    parsed = parse_decimal(item)
    if parsed is None:
        return f"not {item}"
    value, places = parsed
    return str(value + Decimal(1).scaleb(-places))


def wrong_answer(kind: str, gold: str) -> str:
    if kind == "yes_no":
        return "no" if gold.strip().lower().startswith("y") else "yes"
    if kind == "list":
        items = [item.strip() for item in gold.split(",")]
        return ", ".join([*items[:-1], _wrong_item(items[-1])])
    return _wrong_item(gold.strip())


class AnswerFileControl(Control):
    """Writes bytes made from the gold answer to the answer file."""

    def __init__(self, name: str, expected_reward: float, make: Callable[[str, str], bytes]) -> None:
        self.name = name
        self.expected_reward = expected_reward
        self._make = make

    def action(self, task_dir: Path) -> AgentAction:
        kind, gold = gold_of(task_dir)
        staged = "/tmp/traj2env-answer"
        return AgentAction(files={staged: self._make(kind, gold)}, script=f"cp {staged} {ANSWER_FILE}")


class LinkToGoldControl(Control):
    name = "link_to_gold"

    def action(self, task_dir: Path) -> AgentAction:
        gold = shlex.quote(f"{HARNESS_DIR}/{GOLD_FILE}")
        return AgentAction(script=f"ln -sf {gold} {ANSWER_FILE}")


QA_CONTROLS: tuple[Control, ...] = (
    ReferenceControl(),
    NoopControl(),
    AnswerFileControl("empty_answer", 0.0, lambda kind, gold: b""),
    AnswerFileControl("wrong_answer", 0.0, lambda kind, gold: (wrong_answer(kind, gold) + "\n").encode()),
    AnswerFileControl("extra_lines", 0.0, lambda kind, gold: f"{gold}\nsee above\n".encode()),
    AnswerFileControl("utf16_answer", 0.0, lambda kind, gold: f"{gold}\n".encode("utf-16")),
    AnswerFileControl("bom_answer", 0.0, lambda kind, gold: f"\ufeff{gold}\n".encode()),
    AnswerFileControl("crlf_answer", 1.0, lambda kind, gold: f"  {gold}  \r\n".encode()),
    LinkToGoldControl(),
    ForgeRewardControl(),
)

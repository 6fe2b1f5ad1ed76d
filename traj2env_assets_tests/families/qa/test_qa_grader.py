"""The qa grader's rules, case by case (verification/verifier_files/grade_answer.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from traj2env_assets.verification.verifier_files import grade_answer
from traj2env_assets.verification.verifier_files.grade_answer import (
    GoldError,
    check_gold,
    decode_answer,
    grade,
    verdict,
)

GRADER = Path(grade_answer.__file__)


@pytest.mark.parametrize(
    ("gold", "answer", "matched"),
    [
        ("3.14", "3.14", True),
        ("3.14", "3.141592", True),  # rounded to the gold's two decimals
        ("3.14", "3.135", True),  # half-up
        ("3.14", "3.1449", True),
        ("3.14", "3.145", False),  # rounds to 3.15
        ("3.14", "3.1", False),  # 3.10
        ("3.10", "3.1", True),
        ("42", "42.4", True),
        ("42", "42.5", False),
        ("-0.5", "-0.50", True),
        ("-0.5", "0.5", False),
        ("+7", "7", True),
        ("0.35", "35", False),  # no percentage inference
        ("0.35", "35%", False),
        ("35", "0.35", False),
        ("1000", "1,000", False),  # no thousands separator
        ("1000", "1e3", False),  # no exponent
        ("1000", "1000 rows", False),  # no unit
        ("1", "nan", False),
        ("1", "inf", False),
        ("8.75", " 8.750 \n", True),
    ],
)
def test_numbers_compare_at_the_gold_precision(gold: str, answer: str, matched: bool) -> None:
    assert grade("number", gold, answer)[0] is matched


@pytest.mark.parametrize(
    ("gold", "answer", "matched"),
    [
        ("Cairo", "cairo", True),
        ("Cairo", "  CAIRO.\n", True),
        ("Cairo", '"Cairo"', True),
        ("Cairo", "`Cairo`", True),
        ("New  York", "new york", True),
        ("Ｃａｉｒｏ", "Cairo", True),  # noqa: RUF001 - fullwidth on purpose: NFKC
        ("Cairo", "Cairo, Egypt", False),
        ("Cairo", "Lisbon", False),
        ("Cairo", "The answer is Cairo", False),
    ],
)
def test_labels_are_normalized_then_equal(gold: str, answer: str, matched: bool) -> None:
    assert grade("label", gold, answer)[0] is matched


@pytest.mark.parametrize(
    ("gold", "answer", "matched"),
    [
        ("yes", "Yes", True),
        ("yes", "YES.", True),
        ("no", "no", True),
        ("yes", "no", False),
        ("yes", "y", False),
        ("yes", "true", False),
        ("no", "yes and no", False),
    ],
)
def test_yes_no(gold: str, answer: str, matched: bool) -> None:
    assert grade("yes_no", gold, answer)[0] is matched


@pytest.mark.parametrize(
    ("gold", "answer", "matched"),
    [
        ("Cairo, Lisbon", "Lisbon, Cairo", True),  # unordered
        ("Cairo, Lisbon", "lisbon,cairo", True),
        ("Cairo, Lisbon", "Cairo", False),
        ("Cairo, Lisbon", "Cairo, Lisbon, Oslo", False),
        ("Cairo, Cairo", "Cairo, Lisbon", False),  # repeats count
        ("Cairo, Lisbon", "Cairo, , Lisbon", False),
        ("1.5, 2", "2.0, 1.50", True),  # number items at each gold item's precision
        ("1.5, 2", "2, 1.6", False),
    ],
)
def test_lists_are_unordered(gold: str, answer: str, matched: bool) -> None:
    assert grade("list", gold, answer)[0] is matched


@pytest.mark.parametrize(
    ("answer", "matched"),
    [
        ("8.75\n", True),
        ("8.75\r\n", True),
        ("\n8.75\n\n", True),
        ("8.75\nsee above\n", False),
        ("8.75\n8.75\n", False),
        ("", False),
        ("\n  \n", False),
    ],
)
def test_one_line(answer: str, matched: bool) -> None:
    assert grade("number", "8.75", answer)[0] is matched


@pytest.mark.parametrize(
    ("raw", "readable"),
    [
        (b"Cairo\n", True),
        ("Caïro\n".encode(), True),
        ("Cairo\n".encode("utf-16"), False),  # other encodings
        ("Caïro\n".encode("latin-1"), False),
        (b"\xef\xbb\xbfCairo\n", False),  # a byte order mark
        (b"Cai\x00ro\n", False),
        (b"Cairo\x1b[0m\n", False),
    ],
)
def test_only_plain_utf8_is_read(raw: bytes, readable: bool) -> None:
    assert (decode_answer(raw) is not None) is readable


@pytest.mark.parametrize(
    ("kind", "gold"),
    [
        ("number", "about 3"),
        ("number", "35%"),
        ("number", "1e3"),
        ("yes_no", "maybe"),
        ("list", "a,,b"),
        ("label", "  "),
        ("label", "two\nlines"),
        ("kind", "x"),
    ],
)
def test_ungradable_gold_answers_are_refused(kind: str, gold: str) -> None:
    with pytest.raises(GoldError):
        check_gold(kind, gold)


def test_a_link_or_a_large_file_scores_zero(tmp_path: Path) -> None:
    gold = tmp_path / "gold.txt"
    gold.write_text("8.75\n")
    link = tmp_path / "answer.txt"
    link.symlink_to(gold)
    assert verdict(str(link), "number", "8.75")["reward"] == 0
    large = tmp_path / "large.txt"
    large.write_text("8.75" + " " * grade_answer.MAX_ANSWER_BYTES)
    assert verdict(str(large), "number", "8.75") == {"reward": 0, "reason": "the answer file is larger than 4096 bytes"}
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert verdict(str(fifo), "number", "8.75")["reward"] == 0  # never blocks on a FIFO
    assert verdict(str(tmp_path / "absent"), "number", "8.75")["reward"] == 0


def test_the_script_writes_reward_and_verdict_with_the_standard_library_alone(tmp_path: Path) -> None:
    (tmp_path / "answer.txt").write_text("27.85\n")
    (tmp_path / "gold.json").write_text(json.dumps({"kind": "number", "answer": "27.850"}))
    logs = tmp_path / "logs"
    logs.mkdir()
    argv = [
        sys.executable,
        "-I",
        "-S",
        str(GRADER),
        str(tmp_path / "answer.txt"),
        str(tmp_path / "gold.json"),
        str(logs),
    ]
    subprocess.run(argv, check=True, env={"PATH": os.environ["PATH"]})
    assert (logs / "reward.txt").read_text() == "1\n"
    assert json.loads((logs / "verdict.json").read_text()) == {"reward": 1, "reason": "match", "kind": "number"}

"""The qa verifier: grade one answer file against the gold answer, typed and exact.

Run as root by ``tests/test.sh`` with ``python3 -I -S`` (standard library only)::

    grade_answer.py ANSWER_FILE GOLD_JSON LOGS_DIR

The answer file is agent-controlled data: it is opened without following links, must be
a regular file of at most ``MAX_ANSWER_BYTES`` and is only ever decoded and parsed, never
executed or imported. ``LOGS_DIR/reward.txt`` gets 1 or 0 and ``verdict.json`` the
reason. The rules (docs/family-qa.md, "QA grader rules"):

- the file is UTF-8 without a byte order mark, with no NUL or other control character;
  other encodings score 0;
- one line: surrounding whitespace (a final newline included) is ignored, a second
  non-empty line scores 0;
- ``number``: a finite decimal (``-12``, ``3.50``; no exponent, no thousands separator,
  no percent sign, no unit), rounded half-up to the gold's number of decimals and compared
  with the gold; no percentage inference (0.35 and 35 differ);
- ``label``: Unicode NFKC, case-folded, inner whitespace collapsed, surrounding quotes
  or backticks and one final period removed, then equal;
- ``yes_no``: the label rules, and the result must be ``yes`` or ``no``;
- ``list``: items separated by commas, each compared as a number when the gold item is
  one and as a label otherwise; order does not matter, repeats do, no empty item.

The pipeline imports this module too (``grade``) to judge the reference in calibration.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import unicodedata
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

MAX_ANSWER_BYTES = 4096
ANSWER_KINDS = ("number", "label", "yes_no", "list")
_DECIMAL = re.compile(r"^[+-]?(\d+)(\.(\d+))?$")
_QUOTES = ('"', "'", "`")


class GoldError(ValueError):
    """A gold answer that does not fit its kind (the task must not be made)."""


def parse_decimal(text: str) -> tuple[Decimal, int] | None:
    """A finite decimal and its number of decimals, or None."""
    match = _DECIMAL.match(text)
    if match is None:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value, len(match.group(3) or "")


def normalize_label(text: str) -> str:
    text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    while len(text) >= 2 and text[0] == text[-1] and text[0] in _QUOTES:
        text = text[1:-1].strip()
    return text[:-1].rstrip() if text.endswith(".") else text


def _number_matches(answer: str, gold: str) -> bool:
    parsed_gold, parsed_answer = parse_decimal(gold), parse_decimal(answer)
    if parsed_gold is None or parsed_answer is None:
        return False
    gold_value, places = parsed_gold
    step = Decimal(1).scaleb(-places)
    return parsed_answer[0].quantize(step, rounding=ROUND_HALF_UP) == gold_value


def _item_matches(answer: str, gold: str) -> bool:
    if parse_decimal(gold) is not None:
        return _number_matches(answer, gold)
    return normalize_label(answer) == normalize_label(gold)


def _list_items(text: str) -> list[str] | None:
    items = [item.strip() for item in text.split(",")]
    return items if all(items) else None


def check_gold(kind: str, gold: str) -> None:
    """Raise :class:`GoldError` when ``gold`` cannot be graded as ``kind``."""
    if kind not in ANSWER_KINDS:
        raise GoldError(f"unknown answer kind {kind!r}")
    if not gold.strip() or "\n" in gold.strip() or any(unicodedata.category(c) == "Cc" for c in gold.strip()):
        raise GoldError("the gold answer must be one non-empty line")
    if kind == "number" and parse_decimal(gold.strip()) is None:
        raise GoldError(f"{gold!r} is not a finite decimal")
    if kind == "yes_no" and normalize_label(gold) not in ("yes", "no"):
        raise GoldError(f"{gold!r} is not yes or no")
    if kind == "label" and not normalize_label(gold):
        raise GoldError("the gold label is empty once normalized")
    if kind == "list" and _list_items(gold.strip()) is None:
        raise GoldError(f"{gold!r} has an empty list item")


def grade(kind: str, gold: str, answer: str) -> tuple[bool, str]:
    """Whether ``answer`` (the decoded file) matches ``gold``, and why."""
    lines = [line for line in answer.strip().splitlines() if line.strip()]
    if not lines:
        return False, "empty answer"
    if len(lines) > 1:
        return False, "more than one line"
    text, gold = lines[0].strip(), gold.strip()
    if kind == "number":
        if parse_decimal(text) is None:
            return False, "not a finite decimal"
        return (True, "match") if _number_matches(text, gold) else (False, "different number")
    if kind in ("label", "yes_no"):
        normalized = normalize_label(text)
        if kind == "yes_no" and normalized not in ("yes", "no"):
            return False, "not yes or no"
        return (True, "match") if normalized == normalize_label(gold) else (False, "different label")
    items, wanted = _list_items(text), _list_items(gold)
    if items is None or wanted is None:
        return False, "an empty list item"
    if len(items) != len(wanted):
        return False, "different number of items"
    remaining = list(wanted)
    for item in items:
        found = next((index for index, want in enumerate(remaining) if _item_matches(item, want)), None)
        if found is None:
            return False, f"unexpected item {item[:40]!r}"
        remaining.pop(found)
    return True, "match"


def decode_answer(raw: bytes) -> str | None:
    """The answer text, or None when the bytes break the file rules."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if any(unicodedata.category(c) == "Cc" and c not in "\n\r\t" for c in text):
        return None
    return text


def read_answer(path: str) -> tuple[bytes | None, str]:
    """The file's bytes, read without following a link and never past the size cap."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return None, f"no answer file ({exc.strerror})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, "the answer is not a regular file"
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_ANSWER_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_ANSWER_BYTES:
        return None, f"the answer file is larger than {MAX_ANSWER_BYTES} bytes"
    return raw, ""


def verdict(answer_path: str, kind: str, gold: str) -> dict[str, object]:
    raw, problem = read_answer(answer_path)
    if raw is None:
        return {"reward": 0, "reason": problem}
    text = decode_answer(raw)
    if text is None:
        return {"reward": 0, "reason": "not UTF-8 text without a byte order mark or control characters"}
    matched, reason = grade(kind, gold, text)
    return {"reward": 1 if matched else 0, "reason": reason}


def main(argv: list[str]) -> int:
    answer_path, gold_path, logs = argv
    with open(gold_path, encoding="utf-8") as handle:
        gold = json.load(handle)
    result = verdict(answer_path, gold["kind"], gold["answer"])
    result["kind"] = gold["kind"]
    with open(os.path.join(logs, "verdict.json"), "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    with open(os.path.join(logs, "reward.txt"), "w", encoding="utf-8") as handle:
        handle.write(f"{result['reward']}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The build family's ``llm`` mode against a local fake provider (the HTTP boundary): a valid
reply, a refusal, a truncated reply and the spend cap reach report.json per candidate; a
valid reply becomes a published task (real Docker); an oversized project is never sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from traj2env_assets.families.build.candidates import BuildCandidate
from traj2env_assets.families.build.family import BuildFamily
from traj2env_assets.families.contract import CandidateRejected
from traj2env_assets_tests.families.toy_pipeline import ToyPipeline
from traj2env_assets_tests.llm.fake_provider import FakeProvider, FakeReply

ROMANS = "claude-code/python-build-package.jsonl"
INTERVALS = "codex/python-pytest-fix.jsonl"
SLUGIFY = "pi/python-unittest-fix.jsonl"
NODE = "atif/node-npm-test-fix.json"

ROMANS_STUB = '''"""Conversions between integers and Roman numerals."""


class InvalidRomanNumeral(ValueError):
    """Raised for text that is not a Roman numeral in standard form."""


def to_roman(number: int) -> str:
    raise NotImplementedError


def from_roman(text: str) -> int:
    raise NotImplementedError
'''
ROMANS_TESTS = """import pytest

from romans import InvalidRomanNumeral, from_roman, to_roman


def test_one():
    assert to_roman(1) == "I"


def test_subtractive_pairs():
    assert [to_roman(n) for n in (4, 9, 40, 90, 400, 900)] == ["IV", "IX", "XL", "XC", "CD", "CM"]


def test_a_year():
    assert to_roman(1994) == "MCMXCIV"


def test_largest():
    assert to_roman(3999) == "MMMCMXCIX"


def test_parse():
    assert from_roman("XLII") == 42


def test_parse_ignores_case_and_spaces():
    assert from_roman(" mmxxvi ") == 2026


def test_round_trip():
    assert all(from_roman(to_roman(n)) == n for n in range(1, 4000))


def test_out_of_range():
    with pytest.raises(ValueError):
        to_roman(0)
    with pytest.raises(ValueError):
        to_roman(4000)


def test_non_standard_numerals():
    for text in ("IIII", "IC", "VX", ""):
        with pytest.raises(InvalidRomanNumeral):
            from_roman(text)


def test_error_is_a_value_error():
    assert issubclass(InvalidRomanNumeral, ValueError)
"""
ROMANS_PROPOSAL = {
    "contract": "`romans.to_roman(number: int) -> str` (1..3999, else ValueError); "
    "`romans.from_roman(text: str) -> int` (case-insensitive; non-standard numerals raise "
    "`romans.InvalidRomanNumeral`, a ValueError).",
    "stub_files": [
        {"path": "romans/convert.py", "content": ROMANS_STUB},
        {"path": "romans/__init__.py", "content": "from .convert import InvalidRomanNumeral, from_roman, to_roman\n"},
    ],
    "tests": ROMANS_TESTS,
}


def _by_project(request: dict[str, Any]) -> FakeReply | None:
    text = json.dumps(request["messages"])
    if "romans/convert.py" in text:
        return FakeReply(content=json.dumps(ROMANS_PROPOSAL))
    if "intervals.py" in text:
        return FakeReply(content=None, refusal="I can't help with that.")
    if "slugify.py" in text:
        return FakeReply(content='{"contract": "slug', finish_reason="length")
    return None


@pytest.fixture
def instance(tmp_path: Path):
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        yield instance


def test_fake_provider_replies_and_spend_cap_reach_the_report(
    tmp_path: Path, fake_provider: FakeProvider, instance: dg.DagsterInstance
) -> None:
    build = ToyPipeline(tmp_path, [ROMANS, INTERVALS, SLUGIFY, NODE], fake_provider, instance, family="build")
    fake_provider.route = _by_project

    build.run(propose_only=True, jobs=1)

    outcomes = {
        c["facts"]["python_sources"][0] if c["facts"]["python_sources"] else "none": c for c in build.candidates()
    }
    assert outcomes["romans/__init__.py"]["status"] == "passed_proposals"
    assert (outcomes["intervals.py"]["reason"], outcomes["intervals.py"]["proposal"]["decline_reason"]) == (
        "llm_declined",
        "refusal",
    )
    assert (outcomes["slugify.py"]["reason"], outcomes["slugify.py"]["proposal"]["decline_reason"]) == (
        "llm_declined",
        "truncated",
    )
    assert outcomes["none"]["reason"] == "not_python"
    assert fake_provider.request_count == 3
    asked = next(r for r in fake_provider.requests if "romans/convert.py" in json.dumps(r["messages"]))
    assert asked["response_format"]["type"] == "json_schema" and asked["response_format"]["json_schema"]["strict"]
    prompt = json.dumps(asked["messages"])
    assert "Create a small Python package `romans`" in prompt and "def to_roman(number: int)" in prompt

    # Declined replies are not cached: the next run asks again, and the spend cap stops it
    # after the first call (a run overshoots by the calls in flight). The valid reply is
    # reused for free.
    build.run(propose_only=True, jobs=1, max_llm_spend_usd=1e-9)
    outcomes = {
        c["facts"]["python_sources"][0] if c["facts"]["python_sources"] else "none": c for c in build.candidates()
    }
    assert outcomes["romans/__init__.py"]["status"] == "passed_proposals"
    assert outcomes["romans/__init__.py"]["proposal"]["cache_hit"] is True
    assert sorted(outcomes[name]["reason"] for name in ("intervals.py", "slugify.py")) == [
        "budget_exhausted",
        "llm_declined",
    ]
    assert fake_provider.request_count == 4


def test_a_project_over_the_prompt_limit_is_never_sent() -> None:
    candidate = BuildCandidate(
        task_id="big-build", request="Build it.", reference_files={"big.py": "X = 1\n" * 30_000}, session_tests=[]
    )
    with pytest.raises(CandidateRejected) as rejected:
        BuildFamily().proposal_request(candidate)
    assert rejected.value.drop.reason == "project_too_large"
    assert "150,000" in rejected.value.drop.detail


@pytest.mark.docker
@pytest.mark.slow
def test_fake_provider_proposal_becomes_a_published_build_task(
    tmp_path: Path, fake_provider: FakeProvider, instance: dg.DagsterInstance
) -> None:
    build = ToyPipeline(tmp_path, [ROMANS], fake_provider, instance, family="build")
    fake_provider.route = _by_project

    result, _ = build.run()

    assert result.success
    [candidate] = build.candidates()
    assert candidate["kept"], candidate
    facts = candidate["calibration_facts"]
    # The test that passes on the stub (the exception class exists there) is not kept.
    assert (facts["tests_found"], facts["tests_kept"], facts["passing_on_stub"]) == (10, 9, 1)
    assert "tests/test_hidden.py::test_error_is_a_value_error" not in facts["kept_tests"]
    assert facts["kill_rate"] >= 0.6
    rewards = candidate["trial_rewards"]
    assert rewards.pop("reference") == 1.0 and set(rewards.values()) == {0.0} and "stub" in rewards
    task = Path(candidate["published_path"])
    assert (task / "tests" / "traj2env" / "restore" / "tests" / "test_hidden.py").read_text() == ROMANS_TESTS
    # Tests a submission raising ValueError everywhere passes stop counting toward the reward.
    assert facts["tests_rewarding_nothing"] == [
        "tests/test_hidden.py::test_non_standard_numerals",
        "tests/test_hidden.py::test_out_of_range",
    ]
    tracked = (task / "tests" / "traj2env" / "tracked_ids.txt").read_text().split()
    assert sorted(tracked) == sorted(set(facts["kept_tests"]) - set(facts["tests_rewarding_nothing"]))
    assert "to_roman" in (task / "instruction.md").read_text()
    assert "def test_" not in (task / "instruction.md").read_text()
    assert (task / "environment" / "workspace" / "CONTRACT.md").read_text().startswith("`romans.to_roman")

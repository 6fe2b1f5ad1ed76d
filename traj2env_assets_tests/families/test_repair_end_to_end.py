"""The README's main command on the bundled samples, against the real Docker engine and Harbor.

Every session is logged in four formats; the four copies of one piece of work are one task
(the earliest recording wins, the other three are listed as its duplicates). Every family
runs (the example config names them all). Repair emits one task per positive
sample (among them a project with PyPI dependencies installed from the wheelhouse, a nested
node suite and a ruff check), build one per session whose own tests are strong enough and
shown by no other task (a build task hiding the tests a repair task shows is a leak),
extend one per ``python-extend-feature`` session; qa records why it stops without a model.
Every published task's matrix holds (reference 1, every control 0), Harbor's own
`harbor run` scores the tasks of every family 1.0 with the oracle and 0.0
with the no-op agent (but for the repair tasks the attack suite's Harbor jobs score so),
and a rerun of unchanged inputs builds nothing and runs no trial.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from traj2env_assets.harbor.dataset import read_manifest, read_splits
from traj2env_assets.stage_names import CANDIDATE_STAGES
from traj2env_assets_tests.attacks.sample_tasks import SESSIONS as ATTACKED_SESSIONS
from traj2env_assets_tests.example_run import ExampleRun
from traj2env_assets_tests.harbor_jobs import rewards_of, run_harbor_agents

pytestmark = [pytest.mark.docker, pytest.mark.slow]

FORMATS = 4
REPAIR_POSITIVE = {
    "python-pytest-fix",
    "node-npm-test-fix",
    "python-unittest-fix",
    "python-deps-pytest-fix",
    "node-describe-fix",
    "python-ruff-fix",
}
BUILD_POSITIVE = {"python-build-package"}
BUILD_DROPPED = {
    # Their hidden tests are the intervals tests the repair tasks show their agents.
    "python-pytest-fix": "hidden_tests_leak",
    "python-pytest-all-pass": "hidden_tests_leak",
    "python-build-shallow-tests": "weak_tests",
    "python-unittest-fix": "weak_tests",
    "python-pytest-config-cheat": "weak_tests",
    "python-pytest-test-edit": "no_session_tests",
    "node-npm-test-fix": "not_python",
    "node-npm-test-config-cheat": "not_python",
}
EXTEND_POSITIVE = "python-extend-feature"


def _by_family(report: dict) -> dict[str, list[dict]]:
    stems = {i["partition_key"]: Path(i["path"]).stem for i in report["inputs"]}
    families: dict[str, list[dict]] = {}
    for candidate in report["candidates"]:
        families.setdefault(candidate["family"], []).append({**candidate, "stem": stems[candidate["partition_key"]]})
    return families


def _reasons(candidates: list[dict], stem: str) -> list[str | None]:
    """Why the session's candidates were dropped, but for the copies dropped as duplicates."""
    return [c.get("reason") for c in candidates if c["stem"] == stem and c.get("reason") != "duplicate_of"]


def test_every_positive_sample_becomes_one_task_and_negatives_are_dropped(example_run: ExampleRun) -> None:
    report = example_run.first
    families = _by_family(report)
    repair = families["repair"]
    assert Counter(c["stem"] for c in repair if c["kept"]) == dict.fromkeys(REPAIR_POSITIVE, 1)
    assert Counter(c["reason"] for c in repair if not c["kept"]) == {
        "fix_changes_check_config": 8,
        "fix_changes_only_tests": 4,
        "duplicate_of": 3 * len(REPAIR_POSITIVE),
    }
    build = families["build"]
    assert Counter(c["stem"] for c in build if c["kept"]) == dict.fromkeys(BUILD_POSITIVE, 1)
    for stem, reason in BUILD_DROPPED.items():
        assert set(_reasons(build, stem)) == {reason}, stem
    extend = families["extend"]
    assert Counter(c["stem"] for c in extend if c["kept"]) == {EXTEND_POSITIVE: 1}
    # A copy mined before its earliest recording (the worker processes mine in no fixed
    # order) can meet its own end before a stage asks again whose work it is.
    extend_drops = Counter(c["reason"] for c in extend if not c["kept"])
    assert extend_drops["not_python"] == 4 and 1 <= extend_drops["tests_not_collected_before"] <= FORMATS
    assert extend_drops["tests_not_collected_before"] + extend_drops["duplicate_of"] == FORMATS + FORMATS - 1
    # With no model, qa records why its one candidate stops, before any Docker work.
    qa = Counter(c["reason"] for c in families["qa"])
    assert qa.keys() <= {"llm_not_configured", "duplicate_of"} and qa.total() == FORMATS
    assert qa["llm_not_configured"] >= 1
    published = [c for c in report["candidates"] if c["kept"]]
    for candidate in published:
        rewards = dict(candidate["trial_rewards"])
        # The task's whole matrix ran: the reference scores 1, every control 0.
        assert rewards.pop("reference") == 1.0 and rewards and set(rewards.values()) == {0.0}
        assert (Path(candidate["published_path"]) / "task.toml").is_file()
    assert report["funnel"]["published"] == len(published)


def test_the_copies_of_one_fix_are_listed_as_duplicates_of_the_earliest(example_run: ExampleRun) -> None:
    candidates = example_run.first["candidates"]
    by_id = {c["task_id"]: c for c in candidates}
    for task in (c for c in candidates if c["kept"] and c["family"] == "repair"):
        copies = [by_id[task_id] for task_id in task["duplicates"]]
        assert len(copies) == FORMATS - 1
        for copy in copies:
            # Mined after the earliest recording a copy stops at mining; mined before it (the
            # worker processes mine in no fixed order), at a later stage, publish at the latest.
            assert copy["duplicate_of"] == task["task_id"] and copy["status"] == "dropped"
            # The same fix (its hash ends the task id), recorded in another format.
            assert copy["task_id"].rsplit("-", 1)[1] == task["task_id"].rsplit("-", 1)[1]
            assert copy["partition_key"] != task["partition_key"]


def test_rerun_of_unchanged_inputs_builds_nothing_and_runs_no_trial(example_run: ExampleRun) -> None:
    second = example_run.second
    assert second is not None
    assert [c["task_id"] for c in second["candidates"] if c["kept"]] == [
        c["task_id"] for c in example_run.first["candidates"] if c["kept"]
    ]
    workspace = example_run.workspace
    statuses = [json.loads(p.read_text()) for p in workspace.rglob("status.json")]
    # The candidates whose latest walk reached the image stage. A copy of one session's work
    # that went through every stage in the first run, before the earlier recording of the
    # same work claimed it, stops before the image stage on the rerun and keeps its record.
    after_image = set(CANDIDATE_STAGES[CANDIDATE_STAGES.index("images") :])
    walked = [s for s in statuses if s.get("reached") in after_image or s.get("dropped_at") in after_image]
    images = [s["image"]["built"] for s in walked if s.get("image")]
    assert images and not any(images)
    assert {p: p.stat().st_mtime_ns for p in workspace.rglob("trials.json")} == example_run.trial_files


def test_each_calibration_plan_and_trial_matrix_runs_once(example_run: ExampleRun) -> None:
    statuses = [json.loads(p.read_text()) for p in example_run.workspace.rglob("status.json")]
    for stage in ("calibration", "trials"):
        records = [s[stage] for s in statuses if s.get(stage)]
        ran = [r["key"] for r in records if not r["shared"]]
        assert records and sorted(ran) == sorted({r["key"] for r in records}), stage
    # A copy of one session's work has no image of its own: most stop at mining, and one
    # mined before its earliest recording found that recording's image (same content).
    tags = {s["task_id"]: (s.get("image") or {}).get("tag") for s in statuses}
    copies = [c for c in example_run.first["candidates"] if c.get("reason") == "duplicate_of"]
    assert copies and all(tags[c["task_id"]] in (None, tags[c["duplicate_of"]]) for c in copies)


def test_no_matrix_runs_for_a_build_task_that_hides_the_tests_its_sessions_extend_task_shows(
    example_run: ExampleRun,
) -> None:
    """Publish would drop the extend sample's build candidate as hidden_tests_leak (its extend
    task shows those tests): the trials stage drops it once the extend task's matrix passed,
    without a matrix of its own. Both are one session's, so one run's: no timing decides it."""
    build = [c for c in _by_family(example_run.first)["build"] if c["stem"] == EXTEND_POSITIVE]
    [hider] = [c for c in build if c.get("reason") != "duplicate_of"]
    assert (hider["reason"], hider["dropped_at"]) == ("hidden_tests_leak", "trials")
    [shower] = [c for c in _by_family(example_run.first)["extend"] if c["kept"]]
    assert f"is shown by {shower['task_id']}" in hider["detail"]
    statuses = [json.loads(p.read_text()) for p in example_run.workspace.rglob("status.json")]
    [status] = [s for s in statuses if s["task_id"] == hider["task_id"]]
    assert status.get("trials") is None


def test_the_dataset_manifest_lists_every_task_with_source_disjoint_splits(example_run: ExampleRun) -> None:
    dataset = example_run.tasks
    manifest = read_manifest(dataset)
    assert sorted(t.task_id for t in manifest.tasks) == sorted(p.name for p in dataset.iterdir() if p.is_dir())
    assert {t.family for t in manifest.tasks} == {"repair", "build", "extend"}
    train = {t.source_trace for t in manifest.split_of("train")}
    test = {t.source_trace for t in manifest.split_of("test")}
    assert train and test and train.isdisjoint(test)
    # Every fix is its own near-duplicate group, and no group straddles the split.
    assert len({t.group for t in manifest.tasks}) == len(manifest.tasks) and manifest.groups_across_splits == []
    assert all(t.project for t in manifest.tasks)
    # The rerun kept every split (splits.json is read back, never redrawn).
    splits = read_splits(dataset)
    assert splits is not None
    assert splits.sources == {t.source_trace: t.split for t in manifest.tasks}


def test_harbor_oracle_scores_one_and_nop_zero_on_every_family(example_run: ExampleRun) -> None:
    # The attack suite's Harbor jobs run the oracle and the no-op agent on its sample tasks.
    attacked = {example_run.published("repair", session) for session in ATTACKED_SESSIONS.values()}
    published = [c for c in example_run.first["candidates"] if c["kept"] and Path(c["published_path"]) not in attacked]
    assert {c["family"] for c in published} == {"repair", "build", "extend"}
    dataset = example_run.root / "harbor-dataset"
    for candidate in published:
        task = Path(candidate["published_path"])
        shutil.copytree(task, dataset / task.name)
    results = run_harbor_agents(dataset, ["oracle", "nop"], example_run.root / "jobs")
    assert sorted(rewards_of(results["oracle"]).values()) == [1.0] * len(published)
    assert sorted(rewards_of(results["nop"]).values()) == [0.0] * len(published)

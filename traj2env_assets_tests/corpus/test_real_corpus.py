"""The real third-party agent logs in ``../shared/fixtures/real/`` and ``real-dev/`` (never
copied into the repository; ``TRAJ2ENV_REAL_CORPUS`` points elsewhere). Skipped when the
folder is absent: users have no ``../shared``.

Two parts. The pipeline-level properties every real input must keep (cheap, no Docker):
each converts or is skipped with a reason, each converted one passes the ATIF models,
replay never errors, the miners never raise and every drop has a reason. Then the
assertions pinned on particular real sessions (pi compaction, Claude Code edit/read
variants, redacted Codex rollouts); the same shapes are tested on logs of our own making
in ``formats/test_real_shapes.py`` and ``replay/test_real_shapes.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harbor.models.trajectories import Trajectory as HarborTrajectory

from traj2env_assets.checks import parse_check_result, recognise_check
from traj2env_assets.families.contract import MiningInput
from traj2env_assets.families.registry import registered_families
from traj2env_assets.families.repair.candidates import mine_repair_candidates
from traj2env_assets.families.repair.task import (
    DependenciesNotInstallable,
    repair_task_spec,
)
from traj2env_assets.formats.convert import convert_source
from traj2env_assets.layout import Workspace
from traj2env_assets.replay import ReplayRecord, replay_trajectory, stream, write_record
from traj2env_assets.replay.engine import replay_streamed
from traj2env_assets.replay.stream import read_streamed
from traj2env_assets.replay.text_edits import decode_numbered_read
from traj2env_assets.sources import register_sources
from traj2env_assets.stages.convert.conversion import (
    convert_partition,
    trajectory_json,
)
from traj2env_assets.stages.replay.partition import replay_partition
from traj2env_assets.stages.scan.gate import scan_partition, scan_trajectory
from traj2env_assets_tests.corpus import corpus_folder, missing_reason
from traj2env_assets_tests.loaded_logs import (
    load_trajectory,
    npm_check_exit_codes,
    replay_record,
)

CORPORA = ("real", "real-dev")
# The atif-make dataset rows in real/ are not agent session logs (ATBench, METR MALT, Inspect, Markdown).
NON_AGENT_FORMATS = {
    "atbench.json": "unrecognised_format",
    "metr-malt.json": "unrecognised_format",
    "inspect-eval.eval": "binary_file",
    "transcript-markdown.md": "unrecognised_format",
}
CODEX_REDACTED = "localpush-codex/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl"


def _folder(name: str) -> Path:
    folder = corpus_folder(name)
    if folder is None:
        pytest.skip(missing_reason(name))
    return folder


@pytest.fixture(scope="module")
def real() -> Path:
    return _folder("real")


# --- pipeline-level properties on every real input ------------------------------------------


class CorpusRun:
    """Every input of one corpus through registration, conversion, the scan gate, replay and mining."""

    def __init__(self, source: Path, root: Path) -> None:
        self.workspace = Workspace(root=root)
        registration = register_sources(self.workspace, source)
        self.rejected = registration.rejected
        self.keys = registration.new
        self.conversions = {key: convert_partition(self.workspace, key) for key in self.keys}
        self.verdicts = {key: scan_partition(self.workspace, key) for key in self.keys}
        self.replays = {key: replay_partition(self.workspace, key) for key in self.keys}
        self.mined: dict[tuple[str, str], list] = {}
        for key, replay in self.replays.items():
            if replay.outcome.status != "replayed":
                continue
            source_input = MiningInput(
                partition_key=key,
                record=ReplayRecord.load(replay.path),
                trajectory_path=self.workspace.trajectory_file(key),
            )
            for family in registered_families():
                self.mined[(key, family.name)] = list(family.mine(source_input))


@pytest.fixture(scope="module", params=CORPORA)
def corpus_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> CorpusRun:
    return CorpusRun(_folder(request.param), tmp_path_factory.mktemp(request.param))


def test_every_real_input_converts_or_is_skipped_with_a_reason(
    corpus_run: CorpusRun,
) -> None:
    assert corpus_run.keys, "the corpus registered no input"
    for item in corpus_run.rejected:
        assert item.reason and item.detail, item
    for key, conversion in corpus_run.conversions.items():
        if conversion.status == "converted":
            assert conversion.steps > 0, key
            document = json.loads(corpus_run.workspace.trajectory_file(key).read_text(encoding="utf-8"))
            steps = HarborTrajectory.model_validate(document).steps
            assert [step.step_id for step in steps] == list(range(1, len(steps) + 1)), key
        else:
            assert conversion.reason and conversion.detail, key
    converted = [c for c in corpus_run.conversions.values() if c.status == "converted"]
    assert len(converted) >= len(corpus_run.keys) - len(NON_AGENT_FORMATS)


def test_every_real_input_gets_a_gate_verdict_and_replay_never_errors(
    corpus_run: CorpusRun,
) -> None:
    for key, replay in corpus_run.replays.items():
        outcome = replay.outcome
        assert outcome.reason not in {"replay_error", "invalid_trajectory"}, (
            key,
            outcome.detail,
        )
        if corpus_run.conversions[key].status == "converted" and corpus_run.verdicts[key].allows_downstream:
            assert outcome.status == "replayed", (key, outcome.reason)
            fidelity = replay.fidelity
            assert fidelity is not None
            record = ReplayRecord.load(replay.path)
            assert fidelity.events == len(record.timeline)
            assert fidelity.files_rebuilt + fidelity.files_lost + fidelity.files_deleted == len(record.files)
            for command in record.shell_commands():
                before = set(record.files_before(command.command_index))
                assert before.isdisjoint(record.lost_before(command.command_index)), (
                    key,
                    command.command_index,
                )


def test_every_mined_candidate_is_kept_or_dropped_with_a_reason(
    corpus_run: CorpusRun,
) -> None:
    assert corpus_run.mined, "nothing was mined"
    for (key, family), mined in corpus_run.mined.items():
        task_ids = [candidate.task_id for candidate in mined]
        assert len(task_ids) == len(set(task_ids)), (key, family)
        for candidate in mined:
            if candidate.drop is not None:
                assert candidate.drop.reason and candidate.drop.detail, (
                    key,
                    family,
                    candidate.task_id,
                )


def test_registration_keys_are_stable(tmp_path: Path) -> None:
    for name in CORPORA:
        folder = _folder(name)
        first = register_sources(Workspace(root=tmp_path / name / "a"), folder)
        second = register_sources(Workspace(root=tmp_path / name / "b"), folder)
        assert first.new == second.new


# --- assertions pinned on particular real sessions (real/) ----------------------------------


def test_real_keys_are_the_session_ids(real: Path, tmp_path: Path) -> None:
    keys = register_sources(Workspace(root=tmp_path), real).new
    assert "pi-ffae836b-9420-4060-ac13-7745215f90ff" in keys
    assert "codex-019c8a4c-ed82-79a1-aa28-7738fc5ab61a" in keys
    assert "claude-code-1656b075-7af5-4b06-a123-1330c620f60c" in keys


@pytest.mark.parametrize("name,reason", sorted(NON_AGENT_FORMATS.items()))
def test_non_agent_dataset_rows_are_skipped_with_reason(real: Path, name: str, reason: str) -> None:
    result = convert_source(real / "atif-make-fixtures" / name)
    assert (result.record.status, result.record.reason, result.trajectory) == (
        "skipped",
        reason,
        None,
    )


def test_claude_code_repeated_history_is_deduplicated(real: Path) -> None:
    trajectory = load_trajectory(real / "session-share" / "general-tool-calls.jsonl")
    call_ids = [call.tool_call_id for step in trajectory.steps for call in step.tool_calls or []]
    assert len(call_ids) == len(set(call_ids)) == 65
    assert trajectory.extra is not None
    assert trajectory.extra["duplicate_tool_calls"] == 45


def test_claude_code_edit_keeps_pre_image_and_cwd(real: Path) -> None:
    trajectory = load_trajectory(real / "session-share" / "edit-tool-variants.jsonl")
    edits = [call for step in trajectory.steps for call in step.tool_calls or [] if call.function_name == "Edit"]
    assert len(edits) == 4
    assert edits[0].extra is not None
    assert edits[0].extra["cwd"] == "/Users/pete/git/moredip/session-share/e2e-tests"
    results = [r for step in trajectory.steps for r in (step.observation.results if step.observation else [])]
    pre_images = [r.extra["original_file"] for r in results if r.extra and "original_file" in r.extra]
    assert len(pre_images) == 4
    assert "It contains the word hello in the middle." in pre_images[0]


def test_claude_code_read_without_structured_result_invents_nothing(real: Path) -> None:
    trajectory = load_trajectory(real / "session-share" / "read-tool-variants.jsonl")
    results = [r for step in trajectory.steps for r in (step.observation.results if step.observation else [])]
    assert len(results) == 4
    assert all(isinstance(r.content, str) and r.content.startswith("  ") and "\u2192" in r.content for r in results)
    assert all("file_content" not in (r.extra or {}) for r in results)


def test_pi_failing_check_keeps_exit_code(real: Path) -> None:
    trajectory = load_trajectory(real / "pi-mono" / "before-compaction.jsonl")
    checks = npm_check_exit_codes(trajectory)
    assert 1 in checks or 2 in checks
    assert None in checks, "successful runs carry no invented exit code"
    assert trajectory.agent.extra is not None
    assert trajectory.agent.extra["cwd"] == "/Users/badlogic/workspaces/pi-mono"


def test_pi_user_shell_commands_become_system_steps(real: Path) -> None:
    trajectory = load_trajectory(real / "pi-mono" / "before-compaction.jsonl")
    user_shell = [step for step in trajectory.steps if step.extra and "user_shell_command" in step.extra]
    assert len(user_shell) == 3
    assert all(step.source == "system" for step in user_shell)
    observation = user_shell[0].observation
    assert observation is not None and observation.results[0].extra is not None
    assert observation.results[0].extra["exit_code"] == 0


def test_codex_redacted_rollout_keeps_tool_names_and_cwd(real: Path) -> None:
    trajectory = load_trajectory(real / CODEX_REDACTED)
    names = [call.function_name for step in trajectory.steps for call in step.tool_calls or []]
    assert (
        names.count("exec_command"),
        names.count("apply_patch"),
        names.count("write_stdin"),
    ) == (71, 22, 9)
    assert trajectory.session_id == "019c8a4c-ed82-79a1-aa28-7738fc5ab61a"
    assert all(
        call.extra is not None and call.extra["cwd"] == "/redacted/path/fa3f7eaace"
        for step in trajectory.steps
        for call in step.tool_calls or []
        if call.function_name == "apply_patch"
    )


@pytest.mark.parametrize(
    "relative",
    [
        "pi-mono/before-compaction.jsonl",
        "session-share/general-tool-calls.jsonl",
        "session-share/edit-tool-variants.jsonl",
    ],
)
def test_ordinary_real_sessions_pass_the_gate(real: Path, relative: str) -> None:
    verdict = scan_trajectory(load_trajectory(real / relative).model_dump(mode="json", exclude_none=True))
    assert verdict.outcome == "clean", verdict.blocking_ids


@pytest.fixture(scope="module")
def pi_record(real: Path, tmp_path_factory: pytest.TempPathFactory) -> ReplayRecord:
    return replay_record(
        load_trajectory(real / "pi-mono" / "before-compaction.jsonl"),
        tmp_path_factory.mktemp("pi") / "record",
    )


def test_pi_npm_run_check_fail_then_pass_with_edits_between(
    pi_record: ReplayRecord,
) -> None:
    commands = {c.command_index: c for c in pi_record.shell_commands()}
    failing, passing = commands[12], commands[14]
    assert failing.command == passing.command == "cd /Users/badlogic/workspaces/pi-mono && npm run check"
    assert (failing.exit_code, passing.exit_code) == (2, 0)
    session = "packages/coding-agent/src/core/agent-session.ts"
    before_fail = pi_record.files_before(12)[session]
    before_pass = pi_record.files_before(14)[session]
    assert "get queueMode(): QueueMode {" in before_fail
    # As the agent wrote it; the failing `npm run check` then ran `biome check --write`,
    # which re-sorted the imports (seen by the full read before the fix: a resync).
    assert "import type { Agent, AgentEvent, AgentState, AppMessage, ThinkingLevel, QueueMode }" in before_fail
    assert failing.effects == "opaque"
    assert 'get queueMode(): "all" | "one-at-a-time" {' in before_pass
    assert (
        'import type { Agent, AgentState, AppMessage, ThinkingLevel } from "@mariozechner/pi-agent-core";'
        in before_pass
    )
    assert before_pass.startswith("/**\n * AgentSession - Core abstraction")


def test_pi_check_commands_are_recognised_and_judged(pi_record: ReplayRecord) -> None:
    commands = {c.command_index: c for c in pi_record.shell_commands()}
    results = []
    for index in (12, 14):
        command = commands[index]
        check = recognise_check(command.command, pi_record.files_before(index), cwd=command.cwd or "")
        assert check is not None and check.tool == "npm" and check.script == "check"
        results.append(parse_check_result(check, command.output, command.exit_code))
    assert [result.passed for result in results] == [False, True]
    # Diagnostics are identified by file, rule and message, never by line (edits move lines).
    assert "packages/coding-agent/src/core/agent-session.ts: lint/correctness/noUnusedImports" in results[0].failing_ids
    assert (
        "src/core/agent-session.ts: TS2305 Module '\"@mariozechner/pi-agent-core\"' has no exported member 'QueueMode'."
        in results[0].failing_ids
    )
    assert results[1].failing_ids == []


def test_pi_sed_in_place_and_git_restore_mark_files_lost(
    pi_record: ReplayRecord,
) -> None:
    assert {"in_place_edit", "partial_read"} <= set(pi_record.lost_files.values())
    assert pi_record.fidelity.commands == 206
    assert pi_record.fidelity.edits_applied > 50
    assert pi_record.fidelity.unsafe_paths_by_reason == {"outside_project": 1}


def test_pi_file_cut_at_50kb_is_rebuilt_from_the_follow_up_read(
    pi_record: ReplayRecord,
) -> None:
    renderer = pi_record.files["packages/coding-agent/src/tui/tui-renderer.ts"]
    # Step 2 read lines 1-1603 of 2377 (pi's 50 KB cap), step 3 read from line 1604 on.
    assert [(h.step_id, h.action) for h in renderer.history[:2]] == [
        (2, "lost"),
        (3, "read"),
    ]
    first_command = next(pi_record.shell_commands()).command_index
    text = pi_record.files_before(first_command)["packages/coding-agent/src/tui/tui-renderer.ts"]
    assert text.count("\n") == 2376
    assert text.startswith('import { randomBytes } from "node:crypto";\n')


def test_pi_check_is_mined_and_dropped_for_its_dependencies(real: Path, tmp_path: Path) -> None:
    record = replay_record(load_trajectory(real / "pi-mono" / "before-compaction.jsonl"), tmp_path / "r")
    candidates = mine_repair_candidates(record, "pi-mono")
    assert [c.candidate.check.script for c in candidates] == ["check", "check", "check"]
    assert [c.drop and c.drop.reason for c in candidates] == [
        None,
        None,
        "fix_files_lost",
    ]
    assert candidates[2].drop is not None
    assert "packages/coding-agent/src/session-manager.ts" in candidates[2].drop.detail
    with pytest.raises(DependenciesNotInstallable, match=r"package\.json"):
        repair_task_spec(
            candidates[0].candidate,
            source_trace="pi-mono",
            source_model=None,
            org="local",
        )


def test_claude_edit_variants_with_original_file(real: Path, tmp_path: Path) -> None:
    trajectory = load_trajectory(real / "session-share" / "edit-tool-variants.jsonl")
    outside = replay_record(trajectory, tmp_path / "default")
    # The edited files live in a pytest temp dir, outside the session cwd: refused.
    assert outside.fidelity.unsafe_paths_by_reason == {"outside_project": 4}
    assert outside.files == {}
    root = "/private/var/folders/jv/1nszcffd0x74lysjsn_btj6w0000gn/T/pytest-of-pete/pytest-1/test_edit_tool_variants_chromi0"
    record = replay_record(trajectory, tmp_path / "rooted", project_root=root)
    final = record.final_files()
    assert "It contains the word goodbye in the middle." in final["edit_basic.txt"]
    assert "It contains the word hello in the middle." not in final["edit_basic.txt"]
    assert "baz" in final["edit_replace_all.txt"] and "bar" not in final["edit_replace_all.txt"]
    assert "NEW_CODE = true;" in final["edit_multiline.txt"]
    assert record.fidelity.edits_failed == 0
    assert all(s.history[0].action == "pre_image" for s in record.files.values())


def test_claude_read_variants_full_read_only(real: Path, tmp_path: Path) -> None:
    record = replay_record(load_trajectory(real / "session-share" / "read-tool-variants.jsonl"), tmp_path)
    assert list(record.files) == ["conftest.py"]
    assert record.final_files()["conftest.py"].startswith('"""Pytest configuration and fixtures for e2e tests."""\n')
    assert record.fidelity.full_reads == 1


def test_redacted_codex_patches_fail_as_redacted_not_as_parse_errors(real: Path, tmp_path: Path) -> None:
    record = replay_record(load_trajectory(real / CODEX_REDACTED), tmp_path)
    assert record.fidelity.edits_failed_by_reason == {"content_redacted": 22}


def test_claude_numbered_listings_decode_to_the_recorded_file_content(
    real: Path,
) -> None:
    checked = 0
    for line in (real / "session-share" / "general-tool-calls.jsonl").read_text().splitlines():
        if line.startswith("//"):
            continue
        entry = json.loads(line)
        structured = entry.get("toolUseResult")
        if not (isinstance(structured, dict) and structured.get("type") == "text"):
            continue
        listing = entry["message"]["content"][0]["content"]
        assert decode_numbered_read(listing) == structured["file"]["content"]
        checked += 1
    assert checked == 9


@pytest.mark.parametrize(
    ("relative", "steps_last"),
    [
        ("pi-mono/before-compaction.jsonl", True),
        ("session-share/general-tool-calls.jsonl", False),
        (CODEX_REDACTED, True),
    ],
)
def test_streamed_replay_writes_the_same_record_on_real_sessions(
    real: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    relative: str,
    steps_last: bool,
) -> None:
    trajectory = load_trajectory(real / relative)
    path = tmp_path / "trajectory.json"
    # As the conversion stage writes it (steps last), or as ATIF orders it (steps first).
    path.write_text(
        trajectory_json(trajectory) if steps_last else trajectory.model_dump_json(exclude_none=True),
        encoding="utf-8",
    )
    # Small windows: values are cut at chunk edges all the time.
    monkeypatch.setattr(stream, "CHUNK_CHARS", 4096)
    write_record(replay_trajectory(trajectory), tmp_path / "whole")
    spill = tmp_path / "spill"
    spill.mkdir()
    write_record(
        replay_streamed(read_streamed(path, steps_last=steps_last), spill),
        tmp_path / "streamed",
    )
    for name in ("record.json", "manifests.jsonl"):
        assert (tmp_path / "streamed" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()

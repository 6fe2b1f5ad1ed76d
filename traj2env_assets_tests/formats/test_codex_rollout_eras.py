"""Codex rollouts written before ``session_meta`` existed: the mid-2025 bare ``.jsonl``
(header line, ``{"record_type": "state"}`` markers, Responses-API items without an
envelope) and the spring-2025 TypeScript CLI's single ``.json`` document. Hand-made in
the shapes of public examples (``docs/example.jsonl`` of AcidicSoil/codex-session-viewer;
``codex-cli/src/utils/storage/save-rollout.ts`` of openai/codex)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from traj2env_assets.families.repair.candidates import mine_repair_candidates
from traj2env_assets.formats.convert import convert_source
from traj2env_assets.layout import Workspace
from traj2env_assets.sources import register_sources
from traj2env_assets_tests.families.conftest import record_for

SESSION = "cf4def41-21e0-4b91-adb4-5397c1492084"
CWD = "/home/dev/calc"
ADD = "*** Begin Patch\n*** Add File: calc.py\n+def add(a, b):\n+    return a - b\n*** End Patch\n"
TEST = (
    "*** Begin Patch\n*** Add File: test_calc.py\n+from calc import add\n+\n+\n+def test_add():\n"
    "+    assert add(2, 3) == 5\n*** End Patch\n"
)
FIX = "*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n-    return a - b\n+    return a + b\n*** End Patch\n"
FAILED = "F\n=== FAILURES ===\nFAILED test_calc.py::test_add - assert -1 == 5\n1 failed in 0.02s\n"


def _shell(call_id: str, command: list[str], output: str, exit_code: int) -> list[dict[str, Any]]:
    arguments = json.dumps({"command": command, "workdir": CWD, "timeout_ms": 120000})
    wrapped = json.dumps({"output": output, "metadata": {"exit_code": exit_code, "duration_seconds": 0.4}})
    return [
        {"type": "function_call", "id": f"fc_{call_id}", "name": "shell", "arguments": arguments, "call_id": call_id},
        {"type": "function_call_output", "call_id": call_id, "output": wrapped},
    ]


def _items() -> list[dict[str, Any]]:
    context = f"<environment_context>\n  <cwd>{CWD}</cwd>\n  <approval_policy>on-request</approval_policy>\n</environment_context>"
    return [
        {"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": context}]},
        {
            "type": "message",
            "id": None,
            "role": "user",
            "content": [{"type": "input_text", "text": "Write add() and make its test pass."}],
        },
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Create the files."}],
            "encrypted_content": "opaque",
        },
        *_shell("c1", ["apply_patch", ADD], "Done!", 0),
        *_shell("c2", ["apply_patch", TEST], "Done!", 0),
        *_shell("c3", ["bash", "-lc", "python -m pytest -q"], FAILED, 1),
        *_shell("c4", ["apply_patch", FIX], "Done!", 0),
        *_shell("c5", ["bash", "-lc", "python -m pytest -q"], ".\n1 passed in 0.01s\n", 0),
        {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Fixed."}]},
    ]


def _bare_jsonl(path: Path) -> Path:
    header = {
        "id": SESSION,
        "timestamp": "2025-07-10T18:58:38.331Z",
        "instructions": "# AGENTS.md\nBe brief.",
        "git": {"branch": "main"},
    }
    lines = [header, {"record_type": "state"}]
    for item in _items():
        lines += [item, {"record_type": "state"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _typescript_json(path: Path) -> Path:
    document = {
        "session": {"timestamp": "2025-04-20T09:00:00.000Z", "id": SESSION, "instructions": ""},
        "items": _items(),
    }
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


ERAS = {
    "bare-jsonl": (_bare_jsonl, f"rollout-2025-07-10T18-58-38-{SESSION}.jsonl"),
    "typescript-json": (_typescript_json, f"rollout-2025-04-20-{SESSION}.json"),
}


@pytest.mark.parametrize("era", sorted(ERAS))
def test_older_rollouts_convert_and_register(tmp_path: Path, era: str) -> None:
    write, name = ERAS[era]
    (tmp_path / "src").mkdir()
    path = write(tmp_path / "src" / name)
    result = convert_source(path)
    assert result.record.status == "converted", result.record.detail
    assert (result.record.format, result.record.tool_calls) == ("codex", 5)
    trajectory = result.trajectory
    assert trajectory is not None
    assert trajectory.session_id == SESSION
    assert trajectory.extra is not None
    assert trajectory.extra["rollout_format"] == era and trajectory.extra["cwd"] == CWD
    users = [step.message for step in trajectory.steps if step.source == "user"]
    assert users == ["Write add() and make its test pass."]
    assert register_sources(Workspace(root=tmp_path / "ws"), tmp_path / "src").new == [f"codex-{SESSION}"]


@pytest.mark.parametrize("era", sorted(ERAS))
def test_older_rollouts_give_a_repair_candidate(tmp_path: Path, era: str) -> None:
    write, name = ERAS[era]
    record = record_for(write(tmp_path / name), tmp_path / "record")
    mined = mine_repair_candidates(record, f"codex-{era}")
    assert [(m.drop, m.candidate.failing_ids) for m in mined] == [(None, ["test_calc.py::test_add"])]
    assert mined[0].candidate.fixed_files == {"calc.py": "def add(a, b):\n    return a + b\n"}

"""Secrets in a task: detect-secrets finds planted keys of the common providers wherever
the task carries them, the redaction removes every one from the files Harbor reads (the same
key the same way everywhere), ordinary digests are not findings, and publishing refuses a
task a detector still fires on. The keys are fake, shaped like real ones."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from traj2env_assets.harbor.secrets import (
    MARKER,
    redact_task_spec,
    scan_task_dir,
    task_files,
)
from traj2env_assets.harbor.task_spec import TaskSpec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.stages.publish.atomic_publish import publish_task
from traj2env_assets_tests.docker.sample_tasks import node_task, python_task

# Provider -> (a fake key in the shape its issuer uses, the detector that must fire on it).
KEYS = {
    "aws_access_key_id": ("AKIAZ4X7QW2RTY8UOP3M", "AWS Access Key"),
    "github": ("ghp_4f8Kq2LmN7pR1sT9vW3xY6zA0bC5dE8gH2jK", "GitHub Token"),
    "openai": ("sk-proj-Qm3Xv8Lk2Pz9Rt4Wn7Yb1Hc6Jd0FT3BlbkFJs5Ga8Ke2Mu4Np7BqXv8Lk2", "OpenAI Token"),
    "anthropic": (
        "sk-ant-api03-Zr8Qm3Xv8Lk2Pz9Rt4Wn7Yb1Hc6Jd0Fs5Ga8Ke2Mu4Np7Bq-Vx3AAZr8Qm3Xv8Lk2Pz9Rt4Wn7Yb1HcAA",
        "Anthropic API Key",
    ),
    "slack": ("xoxb-2048613579-4096852731-Zr8Qm3Xv8Lk2Pz9Rt4Wn7Yb1", "Slack Token"),
    "stripe": ("sk_live_51Hx3QmXv8Lk2Pz9Rt4Wn7Yb", "Stripe Access Key"),
}
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Tw3Lk9e"
PEM_BODY = "MIIEowIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aumKnKFGRnHEYpZz0z3aNq1lSc"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n"


def _with(spec: TaskSpec, *, instruction: str = "", project: dict[str, str] | None = None) -> TaskSpec:
    files = {**spec.project_files, **{path: text.encode() for path, text in (project or {}).items()}}
    return spec.model_copy(update={"instruction": spec.instruction + instruction, "project_files": files})


def _written_text(spec: TaskSpec, root: Path) -> str:
    task = write_task(spec, root).path
    return "\n".join(path.read_text(encoding="utf-8", errors="replace") for _, path in task_files(task))


@pytest.mark.parametrize("provider", sorted(KEYS))
def test_each_provider_key_in_the_prose_of_a_request_is_found_and_redacted(provider: str, tmp_path: Path) -> None:
    key, detector = KEYS[provider]
    spec = _with(python_task(), instruction=f"\n\nIt fails in CI too; my key is {key} if you need it.\n")
    redaction = redact_task_spec(spec)
    assert [(f.path, f.detector) for f in redaction.findings] == [("instruction.md", detector)]
    assert redaction.remaining == [] and redaction.redacted_files == ["instruction.md"]
    assert not redaction.changes_behaviour, "the instruction is not executed"
    assert key not in redaction.spec.instruction and MARKER.format(n=1) in redaction.spec.instruction
    assert key not in _written_text(redaction.spec, tmp_path)
    assert key not in redaction.model_dump_json(exclude={"spec"}), "a finding never carries the secret"


def test_a_key_is_redacted_the_same_way_everywhere_and_a_private_key_block_whole(tmp_path: Path) -> None:
    key = KEYS["github"][0]
    spec = _with(
        python_task(),
        instruction=f"\nThe client uses {key}.\n",
        project={
            "client.py": f'TOKEN = "{key}"\nAWS_SECRET_ACCESS_KEY = "{AWS_SECRET}"\n',
            "deploy/id_rsa": PEM,
            # Named nowhere a detector looks: redacted because the same key was found elsewhere.
            "notes.txt": f"rotate {key} monthly\n",
        },
    )
    redaction = redact_task_spec(spec)
    assert redaction.remaining == []
    text = _written_text(redaction.spec, tmp_path)
    for secret in (key, AWS_SECRET, PEM_BODY, "PRIVATE KEY"):
        assert secret not in text
    project = redaction.spec.project_files
    markers = {project["notes.txt"].decode().split()[1], redaction.spec.instruction.split()[-1].rstrip(".")}
    assert len(markers) == 1 and f'TOKEN = "{markers.pop()}"' in project["client.py"].decode()
    assert redaction.changes_behaviour
    assert redaction.redacted_files == [
        "environment/workspace/client.py",
        "environment/workspace/deploy/id_rsa",
        "environment/workspace/notes.txt",
        "instruction.md",
    ]


def test_a_short_password_is_redacted_on_its_line_only() -> None:
    spec = _with(python_task(), project={"db.py": 'DB_PASSWORD = "abc1"\n\n\ndef login(pw="abc1"):\n    pass\n'})
    redaction = redact_task_spec(spec)
    assert [(f.path, f.line, f.detector) for f in redaction.findings] == [
        ("environment/workspace/db.py", 1, "Secret Keyword")
    ]
    db = redaction.spec.project_files["db.py"].decode()
    assert db.splitlines()[0] == f'DB_PASSWORD = "{MARKER.format(n=1)}"'
    assert 'login(pw="abc1")' in db and "    pass" in db, "other lines keep their text"


def test_digests_are_not_secrets_but_a_hex_token_is() -> None:
    digest = hashlib.sha256(b"intervals").hexdigest()
    token = hashlib.sha256(b"a token, not a digest").hexdigest()
    spec = _with(
        python_task(),
        project={
            "tests/test_digest.py": f'def test_digest():\n    assert sha256_of("intervals") == "{digest}"\n',
            "api.py": f'API_TOKEN = "{token}"\n',
        },
    )
    spec = spec.model_copy(update={"dependency_lines": [f'LABEL org.example.source="{digest}"']})
    redaction = redact_task_spec(spec)
    assert [(f.path, f.detector) for f in redaction.findings] == [
        ("environment/workspace/api.py", "Hex High Entropy String")
    ]
    assert digest in redaction.spec.project_files["tests/test_digest.py"].decode()


@pytest.mark.parametrize("make", [python_task, node_task])
def test_a_task_without_secrets_has_no_finding_and_is_left_alone(make, tmp_path: Path) -> None:
    spec = make()
    assert scan_task_dir(write_task(spec, tmp_path).path) == []
    redaction = redact_task_spec(spec, tmp_path / "cache")
    assert redaction.spec == spec and redaction.findings == [] and redaction.redacted_files == []
    assert any((tmp_path / "cache").rglob("*.json")), "clean files are cached too"


def test_the_scan_cache_keeps_locations_not_secrets(tmp_path: Path) -> None:
    key = KEYS["aws_access_key_id"][0]
    task = write_task(_with(python_task(), project={"conf.py": f'KEY_ID = "{key}"\n'}), tmp_path / "tasks").path
    first = scan_task_dir(task, tmp_path / "cache")
    assert [(f.path, f.detector) for f in first] == [("environment/workspace/conf.py", "AWS Access Key")]
    assert scan_task_dir(task, tmp_path / "cache") == first
    cached = "".join(path.read_text() for path in (tmp_path / "cache").rglob("*.json"))
    assert "AWS Access Key" in cached and key not in cached


def test_publishing_refuses_a_task_a_detector_fires_on(tmp_path: Path) -> None:
    key = KEYS["slack"][0]
    staged = write_task(_with(python_task(), instruction=f"\nPost to {key}\n"), tmp_path / "staging").path
    destination = tmp_path / "dataset"

    def vet(task_dir: Path) -> str | None:
        findings = scan_task_dir(task_dir)
        return "; ".join(map(str, findings)) or None

    outcome = publish_task(staged, destination, staged.name, vet=vet)
    assert outcome.status == "refused" and outcome.detail == "instruction.md:2 (Slack Token)"
    assert list(destination.iterdir()) == [], "nothing lands, not even the copy"
    clean = write_task(python_task("clean"), tmp_path / "staging").path
    assert publish_task(clean, destination, "clean", vet=vet).status == "published"


def test_a_finding_redaction_cannot_reach_is_left_for_the_caller_to_drop() -> None:
    # A short password in a Dockerfile line traj2env generates: no session file to edit.
    spec = python_task().model_copy(update={"dependency_lines": ['ENV DB_PASSWORD="abc1"']})
    redaction = redact_task_spec(spec)
    assert [str(finding) for finding in redaction.remaining] == ["environment/Dockerfile:4 (Secret Keyword)"]
    assert redaction.redacted_files == []

"""Submission transfer filtering (no engine needed)."""

from __future__ import annotations

import io
import tarfile

from traj2env_assets.docker_engine.sandbox import sanitized


def _tar(members: list[tarfile.TarInfo]) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for member in members:
            data = b"x" * member.size if member.isfile() else None
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    buffer.seek(0)
    return buffer


def _member(name: str, kind: bytes = tarfile.REGTYPE, *, link: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    info.size = 3 if kind == tarfile.REGTYPE else 0
    return info


def test_sanitized_keeps_the_tree_and_drops_what_could_escape_or_escalate() -> None:
    archive = _tar(
        [
            _member("workspace", tarfile.DIRTYPE, mode=0o755),
            _member("workspace/calc.py"),
            _member("workspace/suid", mode=0o4755),
            _member("workspace/inner-link", tarfile.SYMTYPE, link="calc.py"),
            _member("workspace/sub/up-link", tarfile.SYMTYPE, link="../calc.py"),
            _member("workspace/abs-link", tarfile.SYMTYPE, link="/logs/verifier/reward.txt"),
            _member("workspace/out-link", tarfile.SYMTYPE, link="../../etc"),
            _member("workspace/hard", tarfile.LNKTYPE, link="../etc/passwd"),
            _member("workspace/fifo", tarfile.FIFOTYPE),
            _member("workspace/dev", tarfile.CHRTYPE),
        ]
    )
    with tarfile.open(fileobj=sanitized(archive)) as tar:
        kept = {member.name: member for member in tar}
    assert sorted(kept) == [
        "workspace",
        "workspace/calc.py",
        "workspace/inner-link",
        "workspace/sub/up-link",
        "workspace/suid",
    ]
    assert kept["workspace/suid"].mode == 0o755
    assert kept["workspace/calc.py"].size == 3


def test_sanitized_resolves_link_chains_through_the_archive() -> None:
    """Each link alone stays inside; followed through each other they reach ``/``."""
    archive = _tar(
        [
            _member("workspace", tarfile.DIRTYPE, mode=0o755),
            _member("workspace/calc.py"),
            _member("workspace/s", tarfile.SYMTYPE, link="."),
            _member("workspace/x", tarfile.SYMTYPE, link="s/s/../../.."),
            _member("workspace/d", tarfile.DIRTYPE, mode=0o755),
            _member("workspace/d/up", tarfile.SYMTYPE, link=".."),
            _member("workspace/y", tarfile.SYMTYPE, link="d/up/d/up/.."),
            _member("workspace/loop-a", tarfile.SYMTYPE, link="loop-b"),
            _member("workspace/loop-b", tarfile.SYMTYPE, link="loop-a"),
            _member("workspace/via-link", tarfile.SYMTYPE, link="d/up/calc.py"),
            _member("workspace/hard-ok", tarfile.LNKTYPE, link="workspace/calc.py"),
        ]
    )
    with tarfile.open(fileobj=sanitized(archive)) as tar:
        kept = sorted(member.name for member in tar)
    assert kept == [
        "workspace",
        "workspace/calc.py",
        "workspace/d",
        "workspace/d/up",
        "workspace/hard-ok",
        "workspace/s",
        "workspace/via-link",
    ]

"""Pinning through the real ``huggingface_hub`` client against a fake hub on 127.0.0.1."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from traj2env_assets.conventions import file_sha256
from traj2env_assets.families.contract import CandidateRejected
from traj2env_assets.families.qa.pinning import pin_input
from traj2env_assets.families.qa.proposal import QaInput
from traj2env_assets_tests.families.qa.fake_hub import FakeHub, parquet_bytes

REPO = "acme/weather"
TRAIN = QaInput(repo_id=REPO, path="data/train.parquet")


def _dataset(hub: FakeHub) -> list[str]:
    return [
        hub.add_commit(REPO, "2026-01-10T09:00:00.000Z", {"data/train.parquet": parquet_bytes([{"t": 1.0}])}),
        hub.add_commit(
            REPO,
            "2026-02-20T15:30:00.000Z",
            {"data/train.parquet": parquet_bytes([{"t": 2.0}]), "data/extra.parquet": parquet_bytes([{"u": 1}])},
        ),
        hub.add_commit(REPO, "2026-06-01T12:00:00.000Z", {"data/train.parquet": parquet_bytes([{"t": 3.0}])}),
    ]


@pytest.mark.parametrize(
    ("moment", "commit_index", "value"),
    [
        (datetime(2026, 1, 10, 9, 0, tzinfo=UTC), 0, 1.0),  # made at that very moment
        (datetime(2026, 2, 20, 15, 29, tzinfo=UTC), 0, 1.0),
        (datetime(2026, 3, 1, 10, 0, tzinfo=UTC), 1, 2.0),
        # 2026-02-20T16:00+02:00 is 14:00 UTC, before the second commit.
        (datetime.fromisoformat("2026-02-20T16:00:00+02:00"), 0, 1.0),
        (datetime(2027, 1, 1, tzinfo=UTC), 2, 3.0),
    ],
)
def test_fake_hub_pins_the_commit_current_at_the_trajectory_moment(
    fake_hub: FakeHub, tmp_path: Path, moment: datetime, commit_index: int, value: float
) -> None:
    commits = _dataset(fake_hub)
    pinned = pin_input(TRAIN, moment, tmp_path)
    assert pinned.commit == commits[commit_index]
    assert pd.read_parquet(pinned.local_path)["t"].tolist() == [value]
    assert pinned.sha256 == file_sha256(pinned.local_path)
    assert pinned.local_path.is_relative_to(tmp_path)  # nothing written outside the cache root


def test_fake_hub_pin_is_reused_without_the_network(fake_hub: FakeHub, tmp_path: Path) -> None:
    _dataset(fake_hub)
    moment = datetime(2026, 3, 1, tzinfo=UTC)
    first = pin_input(TRAIN, moment, tmp_path)
    fake_hub.requests.clear()
    assert pin_input(TRAIN, moment, tmp_path) == first
    assert fake_hub.requests == []


@pytest.mark.parametrize(
    ("item", "moment", "detail"),
    [
        (
            QaInput(repo_id="acme/missing", path="data/train.parquet"),
            datetime(2026, 3, 1, tzinfo=UTC),
            "no commit list",
        ),
        (TRAIN, datetime(2025, 12, 31, tzinfo=UTC), "no commit at or before"),
        # The file exists on the hub, but only from a commit after the trajectory.
        (QaInput(repo_id=REPO, path="data/extra.parquet"), datetime(2026, 2, 1, tzinfo=UTC), "EntryNotFound"),
        (QaInput(repo_id=REPO, path="data/nothing.parquet"), datetime(2026, 3, 1, tzinfo=UTC), "EntryNotFound"),
    ],
)
def test_fake_hub_input_not_resolvable(
    fake_hub: FakeHub, tmp_path: Path, item: QaInput, moment: datetime, detail: str
) -> None:
    _dataset(fake_hub)
    with pytest.raises(CandidateRejected) as rejected:
        pin_input(item, moment, tmp_path)
    assert rejected.value.drop.reason == "input_not_resolvable"
    assert detail in rejected.value.drop.detail


@pytest.mark.slow  # the hub client retries a refused connection with backoff (about 25 s)
def test_an_unreachable_hub_is_input_not_resolvable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    hub = FakeHub().start()
    endpoint = hub.endpoint
    hub.stop()  # nothing listens on that port any more
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    with pytest.raises(CandidateRejected) as rejected:
        pin_input(TRAIN, datetime(2026, 3, 1, tzinfo=UTC), tmp_path)
    assert rejected.value.drop.reason == "input_not_resolvable"

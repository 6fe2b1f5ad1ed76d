"""The fake platform answers the SDK's real requests and rejects what the real API rejects."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import httpx2
import pytest
from trajectory import Client, ConflictError, UnprocessableEntityError

from traj2env_assets_tests.trajectory_export.fake_trajectory_platform import (
    API_KEY,
    final_reply,
    running_platform,
    tool_call_reply,
)


def _client(base_url: str) -> Client:
    return Client(api_key=API_KEY, base_url=base_url, max_retries=0)


def test_fake_platform_serves_a_harness_sequence_and_checks_its_shapes() -> None:
    with running_platform([tool_call_reply("ls", "c1"), final_reply()]) as platform:
        client = _client(platform.base_url)
        tid = client.trajectories.create().tid
        assert client.trajectories.create().tid == tid  # the session key's precreated trajectory
        tools = {"tools": [{"type": "function", "function": {"name": "shell"}}], "tool_choice": "auto"}
        first = client.chat.completions.create(
            model="policy", messages=[{"role": "user", "content": "hi"}], x_trajectory_id=tid, extra_body=tools
        )
        tool_calls = first.choices[0].message.tool_calls
        assert tool_calls is not None
        call = tool_calls[0]
        history: list[dict[str, Any]] = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call.model_dump(mode="json")]},
            {"role": "tool", "tool_call_id": call.id, "content": "out"},
        ]
        second = client.chat.completions.create(model="policy", messages=history, x_trajectory_id=tid, extra_body=tools)
        assert second.choices[0].finish_reason == "stop"
        data = b"log"
        md5 = base64.b64encode(hashlib.md5(data).digest()).decode()
        upload = client.trajectories.artifacts.create_upload(tid, media_type="text/plain", size_bytes=3, md5=md5)
        httpx2.put(upload.upload_url, content=data, headers=upload.headers).raise_for_status()
        artifact = client.trajectories.artifacts.complete_upload(tid, upload.artifact_id)
        client.trajectories.log_event(tid, event_id="e1", name="evidence", payload={"a": artifact.artifact_id})
        client.trajectories.log_reward(tid, name="reward", value=1.0)
        assert client.trajectories.complete(tid).status == "completed"
        with pytest.raises(ConflictError):
            client.trajectories.log_reward(tid, name="reward", value=0.0)
    record = platform.trajectory
    assert record.termination_reason == "ENV_DONE" and record.rewards[0]["value"] == 1.0
    assert record.chat_requests[0]["tools"] and record.artifacts[upload.artifact_id]["completed"]
    assert all(r.headers["x-api-key"] == API_KEY for r in platform.requests if not r.path.startswith("/_blob/"))
    assert not any("x-api-key" in r.headers for r in platform.requests if r.path.startswith("/_blob/"))


def test_fake_platform_rejects_bad_requests() -> None:
    with running_platform([final_reply()]) as platform:
        client = _client(platform.base_url)
        tid = client.trajectories.create().tid
        with pytest.raises(UnprocessableEntityError):
            client.trajectories.log_event(tid, event_id="x" * 64, name="evidence")
        with pytest.raises(UnprocessableEntityError):  # a field the server schema does not know
            client.trajectories.log_reward(tid, name="reward", value=1.0, extra_body={"reward_idx": "1"})
        with pytest.raises(UnprocessableEntityError):  # a tool result that answers no tool call
            client.chat.completions.create(
                model="policy",
                x_trajectory_id=tid,
                messages=[{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "nope", "content": ""}],
            )
        unauthenticated = Client(api_key="wrong", base_url=platform.base_url, max_retries=0)
        with pytest.raises(Exception, match="X-API-Key"):
            unauthenticated.trajectories.create()
    assert platform.trajectory.rewards == [] and platform.trajectory.events == []

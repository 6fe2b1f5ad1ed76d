"""The verifier's node:test reporter names nested tests by their suites, per file, with
files running in parallel (real ``node --test``; the channel is a plain file here)."""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node")

SUITE = """const {{ describe, it, test }} = require("node:test");
const assert = require("node:assert");
describe("{top}", () => {{
  it("adds", () => assert.strictEqual(1 + 1, 2));
  describe("division", () => {{
    it("divides evenly", () => assert.strictEqual(4 / 2, 3));
  }});
}});
test("flat", () => {{}});
"""


def test_nested_tests_are_reported_with_their_suites(tmp_path: Path) -> None:
    reporter = tmp_path / "node_reporter.mjs"
    source = (resources.files("traj2env_assets.verification") / "verifier_files" / "node_reporter.mjs").read_text()
    # The reporter names files relative to /workspace; here the project is tmp_path.
    reporter.write_text(
        source.replace('const PROJECT_ROOT = "/workspace";', f"const PROJECT_ROOT = {json.dumps(str(tmp_path))};")
    )
    (tmp_path / "test").mkdir()
    for name in ("a", "b"):
        (tmp_path / "test" / f"{name}.test.js").write_text(SUITE.format(top=f"calc {name}"))
    key = "k" * 64
    channel = tmp_path / "channel.jsonl"
    with channel.open("wb") as out:
        subprocess.run(
            f"node --test --test-reporter={reporter} --test-reporter-destination=/dev/null test/a.test.js test/b.test.js "
            f"3>&{out.fileno()} 4< <(printf '%s' {key})",
            shell=True,
            executable="/bin/bash",
            cwd=tmp_path,
            pass_fds=(out.fileno(),),
            timeout=120,
        )
    records = []
    for line in channel.read_text().splitlines():
        envelope = json.loads(line)
        assert hmac.compare_digest(
            hmac.new(key.encode(), envelope["body"].encode(), hashlib.sha256).hexdigest(), envelope["mac"]
        )
        records.append(json.loads(envelope["body"]))
    outcomes = {r["id"]: r["outcome"] for r in records if r["kind"] == "report"}
    for name in ("a", "b"):
        path = f"test/{name}.test.js"
        assert outcomes[f"{path}::calc {name} > adds"] == "passed"
        assert outcomes[f"{path}::calc {name} > division > divides evenly"] == "failed"
        assert outcomes[f"{path}::flat"] == "passed"
        # Suites are reported too (a failing suite fails a "check" run), under their own path.
        assert outcomes[f"{path}::calc {name} > division"] == "failed"
    assert records[-1]["kind"] == "end"

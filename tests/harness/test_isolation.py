"""Isolation: the agent never sees the answer key or the user's agent home; items share nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.agents import parse_agent
from harness.plan import RunConfig
from harness.run.execute import execute_run

#: Real agent processes per test (seconds each).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent.parent
TINY = REPO / "tests" / "data" / "fixtures" / "tiny"
SPY = str(REPO / "tests" / "data" / "agents" / "spy-agent")
SENTINELS = ("ANSWER-KEY-SENTINEL-A", "ANSWER-KEY-SENTINEL-B", "ANSWER-KEY-SENTINEL-C")


def _sentinel_fixture(tmp_path: Path) -> Path:
    fx = tmp_path / "fx"
    shutil.copytree(TINY, fx)
    manifest = json.loads((fx / "fixture.json").read_text())
    manifest["name"] = "sentinel"
    for shard, sentinel in zip(manifest["shards"], SENTINELS, strict=True):
        shard["expected"] = sentinel
    (fx / "fixture.json").write_text(json.dumps(manifest))
    return fx


def _spy_reports(run_dir: Path) -> list[dict]:
    reports = []
    for stdout in sorted((run_dir / "items").glob("*/stdout.jsonl")):
        lines = [json.loads(x) for x in stdout.read_text().splitlines() if x.strip()]
        reports.append(next(x for x in lines if x.get("type") == "spy"))
    return reports


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    agent = home / ".prime" / "agent"
    agent.mkdir(parents=True)
    (agent / "auth.json").write_text(json.dumps({"anthropic": {"key": "sk-user-credential-xyz"}}))
    (agent / "models.json").write_text("{}")
    (agent / "settings.json").write_text('{"keep": true}')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PRIME_AGENT_CODING_AGENT_DIR", raising=False)
    return agent


def test_agent_never_sees_the_answer_key(tmp_path: Path, user_home: Path) -> None:
    before = {p.name: p.read_bytes() for p in user_home.iterdir()}
    config = RunConfig(
        fixtures=(str(_sentinel_fixture(tmp_path)),),
        models=("spy/model",),
        agents=(parse_agent("prime-agent", SPY),),
        runs_dir=tmp_path / "runs",
    )
    outcome = execute_run(config)
    (spy,) = _spy_reports(outcome.run_dir)
    visible = json.dumps([spy["argv"], spy["env"], spy["files"], spy["history"], spy["objects"]])
    for sentinel in SENTINELS:
        assert sentinel not in visible
    assert "fixture.json" not in visible and "task.txt" not in spy["files"]
    tree = sorted(name for name in spy["files"] if not name.startswith(".git/"))
    assert tree == ["shards/shard-a.txt", "shards/shard-b.txt", "shards/shard-c.txt"]
    # The user's agent home is never the agent's, and was not touched.
    agent_home = Path(spy["env"]["PRIME_AGENT_CODING_AGENT_DIR"])
    assert agent_home != user_home and user_home not in agent_home.parents
    assert {p.name: p.read_bytes() for p in user_home.iterdir()} == before
    # The item bundle holds no credential copied from auth.json.
    for path in outcome.run_dir.rglob("*"):
        if path.is_file():
            assert b"sk-user-credential-xyz" not in path.read_bytes(), path


def test_concurrent_items_share_no_workdir_socket_or_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prime_agent_key: str
) -> None:
    monkeypatch.setenv("SPY_SLEEP", "1.0")
    config = RunConfig(
        fixtures=(str(TINY),),
        models=("spy/model",),
        agents=(parse_agent("prime-agent", SPY),),
        trials=4,
        concurrency=4,
        runs_dir=tmp_path / "runs",
    )
    outcome = execute_run(config)
    spies = _spy_reports(outcome.run_dir)
    assert len(spies) == 4
    for key in ("--daemon-socket", "--cwd", "--session-dir"):
        values = [s["argv"][s["argv"].index(key) + 1] for s in spies]
        assert len(set(values)) == 4, key
    homes = [s["env"]["PRIME_AGENT_CODING_AGENT_DIR"] for s in spies]
    assert len(set(homes)) == 4
    tokens = [s["env"]["SWARM_HARNESS_ITEM_TOKEN"] for s in spies]
    assert len(set(tokens)) == 4

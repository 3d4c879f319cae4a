"""Hostile agents and hostile artifacts: clear outcomes, bounded memory, nothing leaks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.agents import parse_agent
from harness.plan import RunConfig
from harness.run.execute import execute_run

REPO = Path(__file__).resolve().parent.parent.parent
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")
HOSTILE = str(REPO / "tests" / "data" / "agents" / "hostile-agent")
SECRET = "sk-hostile-0123456789abcdef"

pytestmark = pytest.mark.reliability


def _run_hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, timeout: float = 30):
    monkeypatch.setenv("HOSTILE_SECRET_API_KEY", SECRET)
    monkeypatch.setenv("HOSTILE_MODE", mode)
    config = RunConfig(
        fixtures=(TINY,),
        models=("hostile/model",),
        agents=(parse_agent("prime-agent", HOSTILE),),
        runs_dir=tmp_path / "runs",
        timeout_s=timeout,
    )
    return execute_run(config)


def _sleepers(since: float) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "create_time"]):
        if proc.info["cmdline"] == ["sleep", "300"] and proc.info["create_time"] >= since:
            found.append(proc)
    return found


def test_hostile_agent_is_scored_contained_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    since = time.time() - 1
    outcome = _run_hostile(tmp_path, monkeypatch, "detach")
    (item,) = outcome.report.items
    assert item.status == "unresolved"
    assert not item.passed("coverage")  # the artifact was a symlink out of the repo: not followed
    assert not item.passed("delegation")  # a ledger edge pointing at /etc/passwd backs nothing
    assert item.score.ledger_malformed_lines >= 2
    meta = json.loads((outcome.run_dir / "items" / item.item_dir / "item.json").read_text())
    assert any(k["reason"] == "orphan" for k in meta["killed_processes"])  # env-scrubbed, detached
    assert _sleepers(since) == []
    # No credential value in anything the harness wrote.
    for path in outcome.run_dir.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    # Nothing outside the workdir was copied in through a symlink.
    copied = {p.name for p in (outcome.run_dir / "items" / item.item_dir).rglob("*")}
    assert "passwd" not in copied and "hostname" not in copied and "sub-evil" not in copied


def test_output_flood_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTILE_FLOOD_MB", "80")
    outcome = _run_hostile(tmp_path, monkeypatch, "flood")
    (item,) = outcome.report.items
    item_dir = outcome.run_dir / "items" / item.item_dir
    assert (item_dir / "stdout.jsonl").stat().st_size <= 64 * 1024 * 1024
    meta = json.loads((item_dir / "item.json").read_text())
    assert "stdout.jsonl" in meta["collection"]["truncated"]


MEMORY_PROBE = r"""
import sys, json
from pathlib import Path
from harness.agents.prime_agent.collect import Layout, locate, scorer_inputs
from harness.agents.prime_agent.bundle import copy_bundle
from scorers.prime_agent import score_prime_agent
from scorers.types import Manifest
root = Path(sys.argv[1])
m = Manifest.from_dict(json.loads((root / "fixture.json").read_text()))
layout = Layout(root / "sessions", root / "session-artifacts", root / "agent-home", root / "repo",
                root / "stdout.jsonl", None, (str(root / "sessions"),))
located = locate(layout, m.artifact)
copy_bundle(located, root / "bundle", [b"secretsecret"])
# As the harness does: score the bounded bundle, never the raw workdir.
bundle = locate(Layout.for_bundle(root / "bundle", layout.sessions_spellings), m.artifact)
score = score_prime_agent(scorer_inputs(bundle), m)
# VmHWM is this image's peak RSS; ru_maxrss would also count the forking parent's pages.
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"maxrss_kb": hwm,
                  "malformed": score.ledger_malformed_lines, "resolved": score.resolved,
                  "transcript_malformed": score.transcript_malformed_lines}))
"""


def test_huge_artifacts_score_in_bounded_memory(tmp_path: Path) -> None:
    """A 256 MB ledger and a 256 MB single-line transcript: streamed, memory stays small."""
    root = tmp_path / "w"
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    (root / "repo").mkdir()
    (root / "repo" / "combined-index.md").write_bytes(b"- a.txt: 1\n" + b"z" * (8 << 20))
    (root / "fixture.json").write_text(
        json.dumps(
            {
                "name": "m",
                "artifact": "combined-index.md",
                "shards": [{"file": "a.txt", "worker": "worker-a", "question": "q", "expected": 1}],
            }
        )
    )
    import hashlib

    ledger = (
        root
        / "agent-home"
        / "rlm-ledger"
        / (hashlib.sha256(str(sessions).encode()).hexdigest()[:16] + ".jsonl")
    )
    ledger.parent.mkdir(parents=True)
    line = (
        json.dumps(
            {
                "v": 1,
                "op": "spawn",
                "at": "t",
                "childId": "sub-1",
                "parent": f"{sessions}/p.jsonl",
                "child": "/x/pid/sub-1/c.jsonl",
                "depth": 1,
                "name": "worker-a",
            }
        ).encode()
        + b"\n"
    )
    block = (line + b"\x00garbage\xff\n") * 4096
    with open(ledger, "wb") as fh:
        while fh.tell() < (256 << 20):
            fh.write(block)
    with open(sessions / "p.jsonl", "wb") as fh:
        fh.write(json.dumps({"type": "session", "version": 3, "id": "pid"}).encode() + b"\n")
        chunk = b"y" * (1 << 20)
        for _ in range(256):
            fh.write(chunk)
    (root / "stdout.jsonl").write_bytes(
        json.dumps({"type": "session", "id": "pid"}).encode() + b"\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(root)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # Bounded by the collection caps (33 MiB ledger, 64 MiB transcript), not by the 512 MB input.
    assert out["maxrss_kb"] < 250 * 1024, out
    assert out["malformed"] > 0 and out["resolved"] is False
    assert (root / "bundle" / "agent-home" / "rlm-ledger" / ledger.name).stat().st_size == 33 << 20
    assert (root / "bundle" / "repo" / "combined-index.md").stat().st_size == 4 << 20

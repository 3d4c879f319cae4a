"""The captured runs of the real prime-agent CLI (tests/data/real-runs) as ATIF: each one
valid by the ``atif`` models and re-scored from its trajectory alone to the verdict its
on-disk evidence gets, per criterion."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from atif import Trajectory

from harness.agents.prime_agent.trajectory import build_swarm
from harness.export import facts_of
from harness.export.atif import write_trajectory
from scorers.atif import trajectory_evidence
from scorers.prime_agent import collect_evidence
from scorers.score import score_evidence
from scorers.types import Manifest, Shard

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scorers"))
from captures import capture_artifacts, parent_transcript

REPO = Path(__file__).resolve().parents[3]
REAL_RUNS = REPO / "tests" / "data" / "real-runs"
WORD_COUNT = Manifest(
    name="word-count",
    artifact="combined-index.md",
    shards=tuple(
        Shard(file=f"shard-{s}.txt", worker=f"worker-shard-{s}", question="words?", expected=n)
        for s, n in (("a", 3), ("b", 5), ("c", 6))
    ),
)
JSON_EVENTS = Manifest.from_dict(
    json.loads((REPO / "fixtures" / "json-events" / "fixture.json").read_text())
)
RUNS = sorted(p.name for p in REAL_RUNS.iterdir() if p.is_dir())


@pytest.mark.parametrize("name", RUNS)
def test_a_real_run_exports_and_reads_back_to_its_verdict(name: str) -> None:
    run = REAL_RUNS / name
    billed = name.startswith("billed-")
    manifest = JSON_EVENTS if billed else WORD_COUNT
    ledgers = run / "agent-home" / "rlm-ledger" if billed else run / "rlm-ledger"
    artifacts = capture_artifacts(run, ledgers)
    evidence = collect_evidence(artifacts)
    score = score_evidence(evidence, manifest)
    transcript, header = parent_transcript(run)
    children = artifacts.child_sessions
    swarm = build_swarm(transcript, run / "session-artifacts" / header, children, evidence)
    facts = facts_of(
        score, run_id="capture", key=name, fixture=manifest.name, trial=1,
        status="resolved" if score.resolved else "unresolved", agent="prime-agent",
        agent_version=None, model="unknown", artifact=manifest.artifact,
    )  # fmt: skip
    doc = json.loads(json.dumps(write_trajectory(swarm, evidence, facts)))
    Trajectory.model_validate(doc)
    assert len(doc.get("subagent_trajectories", ())) == len(evidence.child_sessions)
    assert len(swarm.spawned_by) == len([s for s in evidence.depth1_spawns()])
    back = trajectory_evidence(doc, manifest.artifact)
    assert not back.unscorable
    again = score_evidence(back.evidence, manifest)
    assert {c.name: c.passed for c in again.checks} == {c.name: c.passed for c in score.checks}
    assert [c.failing for c in again.checks] == [c.failing for c in score.checks]

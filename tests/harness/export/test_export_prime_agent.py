"""The captured runs of the real prime-agent CLI (tests/data/real-runs) as ATIF: each one
valid by the ``atif`` models and re-scored from its trajectory alone to the verdict its
on-disk evidence gets, per criterion."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.agents.prime_agent.trajectory import build_swarm
from scorers.prime_agent import collect_evidence
from scorers.types import Manifest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scorers"))
from captures import WORD_COUNT, capture_artifacts, parent_transcript
from exportkit import exports_and_reads_back

REPO = Path(__file__).resolve().parents[3]
REAL_RUNS = REPO / "tests" / "data" / "real-runs"
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
    transcript, header = parent_transcript(run)
    children = artifacts.child_sessions
    swarm = build_swarm(transcript, run / "session-artifacts" / header, children, evidence)
    exports_and_reads_back(evidence, swarm, manifest, "prime-agent", name)
    assert len(swarm.spawned_by) == len(evidence.depth1_spawns())

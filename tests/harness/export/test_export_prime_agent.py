"""The captured runs of the real prime-agent CLI (tests/data/real-runs) as ATIF: each one
valid by the ``atif`` models and re-scored from its trajectory alone to the verdict its
on-disk evidence gets, per criterion; the child-edit captures as an edit fixture's items, their
writes carried whole."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from harness.agents import adapter_for_meta
from harness.agents.prime_agent.trajectory import build_swarm
from scorers.atif import trajectory_evidence
from scorers.prime_agent import collect_evidence
from scorers.records import FileChange, ShardChecks, TreeEvidence
from scorers.types import Manifest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scorers"))
from captures import WORD_COUNT, capture_artifacts, parent_transcript
from exportkit import exports_and_reads_back

REPO = Path(__file__).resolve().parents[3]
REAL_RUNS = REPO / "tests" / "data" / "real-runs"
JSON_EVENTS = Manifest.from_dict(
    json.loads((REPO / "fixtures" / "json-events" / "fixture.json").read_text())
)
EDIT_RUNS = REAL_RUNS / "child-edits"  # a folder of captures, not one
RESIDENT_RUNS = REAL_RUNS / "resident-daemon"  # and the resident drives' bundles
RUNS = sorted(
    p.name for p in REAL_RUNS.iterdir() if p.is_dir() and p not in (EDIT_RUNS, RESIDENT_RUNS)
)


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


@pytest.mark.parametrize("name", ["honest", "early-exit-fanin", "deadline-shutdown"])
def test_a_real_resident_drive_exports_and_reads_back_to_its_verdict(name: str) -> None:
    """The bundles the real CLI's resident drives left (item.json and all) export through
    the adapter as a saved item does: the rebuilt stdout and the unchanged files."""
    bundle = RESIDENT_RUNS / name
    meta = json.loads((bundle / "item.json").read_text())
    manifest = Manifest.from_dict(meta["manifest"])
    adapter = adapter_for_meta(meta)
    evidence = adapter.evidence(bundle, meta, manifest)
    swarm = adapter.swarm(bundle, meta, evidence, manifest)
    exports_and_reads_back(evidence, swarm, manifest, "prime-agent", name)
    assert len(swarm.spawned_by) == len(evidence.depth1_spawns()) == 3


def _as_edit_fixture(case: str) -> tuple[Manifest, TreeEvidence]:
    """The capture's fixture as an edit fixture (each shard owns its module; the shared
    capture's one module is everyone's), and a final tree where every declared file changed
    and every shard's checks passed: what remains to judge is who wrote what."""
    shared_case = case == "edit-same-file"
    name = "edit-orders-shared" if shared_case else "edit-orders"
    data = json.loads((EDIT_RUNS / "fixtures" / name / "fixture.json").read_text())
    data["kind"] = "edit"
    data["shared"] = ["pkg/shared.py"] if shared_case else []
    for shard in data["shards"]:
        stem = shard["file"].removesuffix(".jsonl").replace("-", "_")
        shard["owns"] = [] if shared_case else [f"pkg/mod_{stem}.py"]
    manifest = Manifest.from_dict(data)
    tree = TreeEvidence(
        files=tuple(FileChange(path, "changed", "diff") for path in manifest.editable),
        checks=tuple(ShardChecks(s.file, "passed", 1) for s in manifest.shards),
    )
    return manifest, tree


@pytest.mark.parametrize("case", ["edit-honest", "edit-bash", "edit-parent", "edit-same-file"])
def test_a_real_edit_run_exports_and_reads_back_with_its_writes(case: str) -> None:
    run = EDIT_RUNS / case
    artifacts = capture_artifacts(
        run,
        run / "agent-home" / "rlm-ledger",
        root="/srv/evals/item",
        stdout="stdout-first-line.jsonl",
    )
    manifest, tree = _as_edit_fixture(case)
    evidence = dataclasses.replace(collect_evidence(artifacts), tree=tree)
    transcript, header = parent_transcript(run)
    children = artifacts.child_sessions
    swarm = build_swarm(transcript, run / "session-artifacts" / header, children, evidence)
    doc = exports_and_reads_back(evidence, swarm, manifest, "prime-agent", case)
    back = trajectory_evidence(doc, manifest.artifact, manifest.kind).evidence
    assert back.writes == evidence.writes and back.tree == tree
    assert len(evidence.writes) > 1
    if case == "edit-parent":  # the parent's edits, traced to it from the trajectory alone
        verdicts = {n: v["reason"] for n, v in doc["extra"]["swarm_harness"]["verdicts"].items()}
        assert "pkg/mod_orders_01.py written by the parent" in (verdicts["provenance"] or "")

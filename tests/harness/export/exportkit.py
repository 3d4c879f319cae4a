"""The check every agent's captures share: a run's swarm written as ATIF, valid by the
``atif`` models, read back to the verdict (and failing names) its on-disk evidence got."""

from __future__ import annotations

import json
from typing import Any

from atif import Trajectory

from harness.export import facts_of
from harness.export.atif import write_trajectory
from harness.model.trajectory import Swarm
from scorers.atif import trajectory_evidence
from scorers.records import RunEvidence
from scorers.score import score_evidence
from scorers.types import Manifest


def exports_and_reads_back(
    evidence: RunEvidence, swarm: Swarm, manifest: Manifest, agent: str, key: str
) -> dict[str, Any]:
    """Assert the round trip; return the document (for agent-specific checks)."""
    score = score_evidence(evidence, manifest)
    facts = facts_of(
        score, run_id="capture", key=key, fixture=manifest.name, trial=1,
        status="resolved" if score.resolved else "unresolved", agent=agent,
        agent_version=None, model="unknown", artifact=manifest.artifact, kind=manifest.kind,
    )  # fmt: skip
    doc: dict[str, Any] = json.loads(json.dumps(write_trajectory(swarm, evidence, facts)))
    Trajectory.model_validate(doc)
    back = trajectory_evidence(doc, manifest.artifact, manifest.kind)
    assert not back.unscorable
    again = score_evidence(back.evidence, manifest)
    assert {c.name: c.passed for c in again.checks} == {c.name: c.passed for c in score.checks}
    assert [c.failing for c in again.checks] == [c.failing for c in score.checks]
    return doc


def results_on_their_calls(swarm: Swarm) -> int:
    """Assert every tool result sits on the turn that made its call; how many there are."""
    results = 0
    for thread in (swarm.parent, *swarm.children):
        for turn in thread.turns:
            own = {c.call_id for c in turn.calls}
            assert all(r.call_id in own for r in turn.results), (thread.thread_id, turn)
            results += len(turn.results)
    return results

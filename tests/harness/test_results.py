"""ItemResult round-trips exactly through its report form (what --resume reads back)."""

from __future__ import annotations

import json
from pathlib import Path

from harness.model.item import ItemResult, RunFacts
from scorers.prime_agent import PrimeAgentArtifacts, score_prime_agent
from scorers.types import Manifest

MANIFEST = Manifest.from_dict(
    {
        "name": "m",
        "artifact": "a.md",
        "shards": [{"file": "x.txt", "worker": "worker-x", "question": "q", "expected": 1}],
    }
)


def test_item_result_round_trip(tmp_path: Path) -> None:
    score = score_prime_agent(PrimeAgentArtifacts(parent_session_paths=()), MANIFEST)
    result = ItemResult(
        "m:p/x:1", "m", "p/x", 1, "m__p_x__1", score, RunFacts(1.5, 0, False, None, "oops", 2, 0)
    )
    data = json.loads(json.dumps(result.to_dict()))
    assert ItemResult.from_dict(data) == result
    assert data["status"] == "unresolved" and data["score"]["missing_shards"] == ["x.txt"]
    assert data["facts"]["agent_error"] == "oops"


def test_errored_item_never_resolved() -> None:
    score = score_prime_agent(PrimeAgentArtifacts(parent_session_paths=()), MANIFEST)
    result = ItemResult(
        "k", "m", "p/x", 1, "d", score, RunFacts(0.0, None, False, "agent could not start", None)
    )
    assert result.status == "error" and result.resolved is False

"""Collection bounds: a large honest fan-out is collected whole; a hit cap is an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents.prime_agent import collect
from harness.agents.prime_agent.collect import Layout, locate, scorer_inputs
from harness.item.scoring import facts_from_meta
from scorers import assess_evidence
from scorers.prime_agent import collect_evidence
from scorers.types import Manifest

PARENT_ID = "01a228ad-465d-711e-a795-d3d4d68facdd"
#: More children than the old cap of 4,096 files, which scored such runs "delegation failed".
LARGE_FAN_OUT = 4_100
MANIFEST = Manifest.from_dict(
    {
        "name": "caps",
        "artifact": "combined-index.md",
        "shards": [{"file": "a.txt", "worker": "worker-a", "question": "?", "expected": 1}],
    }
)


def _bundle(root: Path, children: int) -> Layout:
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    header = {"type": "session", "version": 3, "id": PARENT_ID, "timestamp": "t", "cwd": "/r"}
    (sessions / "parent-file.jsonl").write_text(json.dumps(header) + "\n")
    kids = root / "session-artifacts" / PARENT_ID
    for k in range(children):
        sub = kids / f"sub-{k:08x}"
        sub.mkdir(parents=True)
        (sub / f"child-{k}.jsonl").write_text("{}\n")
    (root / "repo").mkdir()
    (root / "agent-home").mkdir()
    return Layout(
        sessions=sessions,
        session_artifacts=root / "session-artifacts",
        agent_home=root / "agent-home",
        repo=root / "repo",
        stdout=None,
        stderr=None,
        sessions_spellings=(str(sessions),),
    )


def test_a_fan_out_beyond_4096_children_is_collected_whole(tmp_path: Path) -> None:
    located = locate(_bundle(tmp_path, LARGE_FAN_OUT), MANIFEST.artifact)
    assert (len(located.children), located.capped) == (LARGE_FAN_OUT, ())


@pytest.mark.parametrize(
    ("children", "capped"),
    [
        pytest.param(5, False, id="below-cap"),
        pytest.param(6, True, id="cap-hit"),
    ],
)
def test_a_hit_cap_makes_the_item_an_error_that_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, children: int, capped: bool
) -> None:
    monkeypatch.setattr(collect, "MAX_CHILD_FILES", 5)
    located = locate(_bundle(tmp_path, children), MANIFEST.artifact)
    assert bool(located.capped) is capped
    assessed = assess_evidence(collect_evidence(scorer_inputs(located)), MANIFEST)
    meta = {"exit_code": 0, "collection": {"capped": list(located.capped)}}
    facts = facts_from_meta(meta, assessed, tmp_path)
    if capped:
        assert facts.error is not None
        assert "cap" in facts.error and "child session files" in facts.error
    else:
        assert facts.error is None or "cap" not in facts.error

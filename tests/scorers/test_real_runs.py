"""Score the three captured runs of the real CLI (``tests/data/real-runs``), their inputs
built by hand as the collector would (:mod:`captures`)."""

from __future__ import annotations

from pathlib import Path

from captures import WORD_COUNT, capture_artifacts, parent_transcript

from scorers import ItemScore
from scorers.prime_agent import score_prime_agent

MANIFEST = WORD_COUNT


def score_run(real_runs: Path, name: str) -> ItemScore:
    """Score one run of ``real_runs`` (tests/conftest.py)."""
    run = real_runs / name
    transcript, header_id = parent_transcript(run)
    assert header_id not in transcript.name  # the trap these runs document
    return score_prime_agent(capture_artifacts(run, run / "rlm-ledger"), MANIFEST)


def test_run1_honest_fan_out_is_resolved(real_runs: Path) -> None:
    score = score_run(real_runs, "run1")
    assert score.resolved, score.failures
    assert score.verified_shard_workers == tuple(s.worker for s in MANIFEST.shards)
    assert (score.live_depth1_edges, score.child_session_dirs, score.total_spawns) == (3, 3, 3)
    assert score.parent_session_id == "01a228ad-465d-711e-a795-d3d4d68facdd"
    usage = score.usage
    assert usage.parent is not None and usage.children is not None
    assert (score.turns, usage.parent.total, usage.children.total) == (6, 6462, 6162)
    assert usage.complete and usage.source.startswith("parent stream")
    assert score.model_reached and score.agent_error is None
    assert (score.ledger_malformed_lines, score.transcript_malformed_lines) == (0, 0)
    assert score.passed("provenance") and score.child_session_malformed_lines == 0


def test_run2_nospawn_covers_but_does_not_delegate(real_runs: Path) -> None:
    score = score_run(real_runs, "run2-nospawn")
    assert not score.resolved
    assert score.passed("coverage") and not score.passed("delegation")
    assert score.unverified_shard_workers == tuple(s.worker for s in MANIFEST.shards)
    assert (score.total_spawns, score.passed("receipts"), score.passed("dedup")) == (0, True, True)
    # Nobody but the parent answered: no shard's value can come from its child either.
    assert not score.passed("provenance")
    assert score.untraced_shards == tuple(s.file for s in MANIFEST.shards)
    assert [reason.split(":")[0] for reason in score.failures] == ["delegation", "provenance"]


def test_run0_turn_end_exit_fails_coverage_receipts_and_provenance(real_runs: Path) -> None:
    score = score_run(real_runs, "run0-turn-end-exit")
    assert not score.resolved
    assert not score.passed("coverage") and score.missing_shards == tuple(
        s.file for s in MANIFEST.shards
    )
    assert not score.passed("receipts")
    # workers b and c were torn down silently; only a left a completed_without_reply notice
    assert score.missing_receipts == ("sub-4db944de", "sub-547fdf27")
    assert score.passed("delegation") and score.passed("dedup")
    # No artifact: no answer to trace (and no child replied).
    assert not score.passed("provenance")
    assert [reason.split(":")[0] for reason in score.failures] == [
        "coverage",
        "receipts",
        "provenance",
    ]

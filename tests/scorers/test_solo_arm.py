"""A solo twin (``run --solo``) is judged by what one agent working alone can pass or fail:
the real CLI's run that answered every shard itself resolves as a solo run, and fails
delegation as a swarm; the swarm's criteria are not judged on a twin (never failed)."""

from __future__ import annotations

from pathlib import Path

from captures import WORD_COUNT, capture_artifacts

from scorers import assess_evidence
from scorers.criteria import CRITERIA
from scorers.prime_agent import collect_evidence


def test_a_run_that_answers_alone_resolves_as_a_solo_twin_and_not_as_a_swarm(
    real_runs: Path,
) -> None:
    run = real_runs / "run2-nospawn"
    evidence = collect_evidence(capture_artifacts(run, run / "rlm-ledger"))
    swarm = assess_evidence(evidence, WORD_COUNT).score
    solo = assess_evidence(evidence, WORD_COUNT, arm="solo").score
    assert not swarm.resolved and "delegation" in swarm.failed_criteria
    assert solo.resolved
    assert [c.name for c in solo.checks] == [c.name for c in CRITERIA if c.solo] == ["coverage"]
    assert solo.passed("delegation") is None  # not judged, not failed
    # The figures the swarm's judges report are still there (a twin that spawned is flagged
    # from them).
    assert solo.total_spawns == swarm.total_spawns == 0
    assert solo.tokens_used == swarm.tokens_used


def test_a_solo_twin_with_a_wrong_answer_fails_coverage(real_runs: Path) -> None:
    run = real_runs / "run1"
    evidence = collect_evidence(capture_artifacts(run, run / "rlm-ledger"))
    shards = tuple(s.__class__(**{**s.__dict__, "expected": 999999}) if i == 0 else s
                   for i, s in enumerate(WORD_COUNT.shards))  # fmt: skip
    manifest = WORD_COUNT.__class__(**{**WORD_COUNT.__dict__, "shards": shards})
    solo = assess_evidence(evidence, manifest, arm="solo").score
    assert not solo.resolved and solo.failed_criteria == ("coverage",)

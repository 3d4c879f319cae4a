"""The verdict holds while the provider misbehaves: an A/A comparison whose candidate lost
30% of its items to the provider (no retries) is not a regression, because those items are
errors kept out of the rates. Measured by simulation over many seeds, and set against what
the gate would say had the provider's failures been scored against the agent."""

from __future__ import annotations

import dataclasses
import random

import pytest
from model_builders import make_item

from harness.model.item import ItemResult
from harness.stats.compare import compare

pytestmark = pytest.mark.statistics

#: Runs simulated per figure (fixed seeds): the false-regression rate to about ±1 point.
RUNS = 1000
FIXTURES = ("fx-a", "fx-b", "fx-c")
TRIALS = 10
RATE = 0.8
THROTTLED = 0.3
#: The gate's promise: at most this share of A/A comparisons reads "regressed".
ALLOWED = 0.05
LOST = "provider: 529 overloaded ×4 in the parent, gave up"


def _items(rng: random.Random, throttled: float, as_unresolved: bool) -> list[ItemResult]:
    items = []
    for fixture in FIXTURES:
        for trial in range(1, TRIALS + 1):
            lost = rng.random() < throttled
            resolved = rng.random() < RATE and not lost
            item = make_item(fixture, trial, resolved)
            if lost and not as_unresolved:
                facts = dataclasses.replace(item.facts, error=LOST)
                item = dataclasses.replace(item, facts=facts)
            items.append(item)
    return items


def _false_regressions(as_unresolved: bool) -> float:
    regressed = 0
    for seed in range(RUNS):
        rng = random.Random(seed)
        baseline = _items(rng, 0.0, as_unresolved)
        candidate = _items(rng, THROTTLED, as_unresolved)
        verdict = compare(baseline, candidate, 0.0, "baseline").overall.verdict
        regressed += verdict == "regressed"
    return regressed / RUNS


def test_a_throttled_candidate_is_not_read_as_a_regression() -> None:
    rate = _false_regressions(as_unresolved=False)
    assert rate <= ALLOWED, f"A/A with 30% lost to the provider: {rate:.1%} regressed"


def test_scored_against_the_agent_the_same_faults_would_fail_the_gate() -> None:
    """Why the rule exists: the provider's 30% counted as unresolved drops the candidate's
    rate by about 24 points, and the gate calls nearly every such run a regression."""
    assert _false_regressions(as_unresolved=True) > 0.4

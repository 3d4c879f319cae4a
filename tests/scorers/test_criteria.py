"""The criteria registry: one entry per gating criterion, and scoring follows it."""

from __future__ import annotations

import dataclasses

import pytest
from scorer_builders import honest_run

from scorers import ItemScore, criteria
from scorers.criteria import CRITERIA, Criterion, Judgement, criterion_names


def test_names_are_unique() -> None:
    assert len(set(criterion_names())) == len(CRITERIA)


def test_a_verdict_lives_only_in_checks() -> None:
    """No pass flag, resolved or failures field repeats what the checks say."""
    fields = {f.name for f in dataclasses.fields(ItemScore)}
    assert not ({*criterion_names(), "resolved", "failures", "delegation_evidence"} & fields)


def test_a_score_has_one_check_per_criterion_in_order() -> None:
    score = honest_run().score()
    assert [c.name for c in score.checks] == [c.name for c in CRITERIA]
    assert score.resolved and all(c.passed for c in score.checks)
    for check in score.checks:
        assert score.passed(check.name) is check.passed


def _always_fails(ctx: criteria.ScoringContext) -> Judgement:
    shards = tuple(s.file for s in ctx.manifest.shards)
    return Judgement(False, shards, "tidiness: the index is not tidy")


def _always_fails_with_evidence(ctx: criteria.ScoringContext) -> Judgement:
    judgement = _always_fails(ctx)
    return Judgement(False, judgement.failing, judgement.reason, {"untidy_lines": 3})


TIDINESS = Criterion("tidiness", "the index is tidy", _always_fails_with_evidence)


@pytest.fixture
def sixth_criterion(monkeypatch: pytest.MonkeyPatch) -> Criterion:
    """A registry with one more entry, and nothing else changed."""
    monkeypatch.setattr(criteria, "CRITERIA", (*CRITERIA, TIDINESS))
    return TIDINESS


def test_a_new_criterion_gates_with_one_registry_entry(sixth_criterion: Criterion) -> None:
    score = honest_run().score()
    assert not score.resolved
    assert score.checks[-1].name == "tidiness" and not score.checks[-1].passed
    assert score.failures == ("tidiness: the index is not tidy",)
    assert ItemScore.from_dict(score.to_dict()) == score


def test_a_new_criterion_keeps_its_evidence(sixth_criterion: Criterion) -> None:
    """Details a judge reports that the score has no field for stay with its check."""
    check = honest_run().score().check("tidiness")
    assert check is not None and check.details == {"untidy_lines": 3}

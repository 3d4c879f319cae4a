"""The criteria registry: one entry per gating criterion, and scoring follows it."""

from __future__ import annotations

import dataclasses

import pytest
from scorer_builders import honest_run

from scorers import ItemScore, criteria
from scorers.criteria import CRITERIA, Criterion, Judgement, criterion_fields


def test_names_and_fields_are_unique() -> None:
    assert len({c.name for c in CRITERIA}) == len(CRITERIA)
    assert len(set(criterion_fields())) == len(CRITERIA)


def test_every_built_in_flag_is_a_score_field() -> None:
    fields = {f.name for f in dataclasses.fields(ItemScore)}
    assert set(criterion_fields()) <= fields


def test_a_score_has_one_check_per_criterion_in_order() -> None:
    score = honest_run().score()
    assert [c.name for c in score.checks] == [c.name for c in CRITERIA]
    assert score.resolved and all(c.passed for c in score.checks)
    for check in score.checks:
        assert getattr(score, check.field) is check.passed


def _always_fails(ctx: criteria.ScoringContext) -> Judgement:
    shards = tuple(s.file for s in ctx.manifest.shards)
    return Judgement(False, shards, "tidiness: the index is not tidy")


TIDINESS = Criterion("tidiness", "tidy", "the index is tidy", _always_fails)


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

"""Typed shapes of the report's aggregate parts: summaries, overall rates, comparisons.

The producers (:mod:`harness.aggregate`, :mod:`harness.compare`) build these frozen records
and serialise them once with ``to_dict``; ``report.json`` (and ``compare --json``) hold that
form, and ``from_dict`` reads it back. The JSON Schema (``schemas/report.schema.json``) is
checked against these fields in ``tests/harness/test_shapes.py``, so the two cannot drift.
Criteria keys come from the scorer's registry; nothing here names a criterion.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from harness.stats import Verdict

#: Version of the comparison object (also printed alone by ``compare --json``).
#: 1: the fixed-suite stratified comparison with its gate (report schema 3).
COMPARISON_SCHEMA_VERSION = 1

Interval = list[float] | None


class _Shape:
    """``to_dict``/``from_dict`` for flat records whose nested parts are plain JSON."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        missing = [n for n in names if n not in data]
        if missing:
            raise ValueError(f"{cls.__name__}: missing fields {missing}")
        return cls(**{n: data[n] for n in names})


@dataclass(frozen=True)
class RateEntry(_Shape):
    """A count out of ``n`` with its rate and 95% interval (None without trials)."""

    count: int
    rate: float | None
    ci: Interval


@dataclass(frozen=True)
class FixtureSummary(_Shape):
    """One fixture x model of a run: errored items are counted and kept out of every rate."""

    fixture: str
    model: str
    n: int
    errors: int
    errored_keys: list[str]
    resolved: int
    rate: float | None
    ci: Interval
    #: criterion field -> RateEntry.to_dict()
    criteria: dict[str, dict[str, Any]]
    #: measure -> MeanSummary.to_dict()
    measures: dict[str, dict[str, Any]]
    pass_at_k: dict[str, float]
    pass_hat_k: dict[str, float]


@dataclass(frozen=True)
class ModelOverall(_Shape):
    """One model over the fixed suite: the equal-weight mean of its fixtures' rates."""

    model: str
    strata: int
    n: int
    n_effective: float
    rate: float
    ci: Interval
    confidence: float
    method: str
    resolved: int
    random_fixtures: dict[str, Any] | None


@dataclass(frozen=True)
class RateDiff(_Shape):
    """Candidate minus baseline for one rate; all None when a run did not record it."""

    baseline_rate: float | None
    candidate_rate: float | None
    delta: float | None
    ci: Interval


@dataclass(frozen=True)
class FixtureComparison(_Shape):
    fixture: str
    model: str
    baseline_n: int
    candidate_n: int
    baseline_errors: int
    candidate_errors: int
    baseline_rate: float
    candidate_rate: float
    delta: float
    ci: Interval
    verdict: Verdict
    disagreement: float
    #: criterion field -> RateDiff.to_dict()
    criteria: dict[str, dict[str, Any]]
    #: measure -> DiffSummary.to_dict()
    measures: dict[str, dict[str, Any]]
    trials_for_power: int | None


@dataclass(frozen=True)
class OverallComparison(_Shape):
    """The fixed-suite comparison the gate reads (see :mod:`harness.compare`)."""

    strata: int
    baseline_rate: float | None
    candidate_rate: float | None
    delta: float | None
    ci: Interval
    verdict: Verdict
    method: str
    disagreement: float | None
    criteria: dict[str, dict[str, Any]]
    trials_for_power: int | None
    random_fixtures: dict[str, Any] | None


@dataclass(frozen=True)
class Gate(_Shape):
    passed: bool
    reasons: list[str]


@dataclass(frozen=True)
class Comparison(_Shape):
    """The ``comparison`` object of a candidate report."""

    baseline: str
    threshold: float
    fixtures: list[dict[str, Any]]
    overall: dict[str, Any]
    wins: int
    losses: int
    ties: int
    missing_in_candidate: list[dict[str, str]]
    missing_in_baseline: list[dict[str, str]]
    error: str | None
    gate: dict[str, Any]
    schema_version: int = COMPARISON_SCHEMA_VERSION

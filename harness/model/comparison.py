"""A candidate run compared with a baseline run: per fixture x model, overall, the gate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.model.record import Interval, Record
from harness.model.summary import DiffSummary

#: Version of the comparison object (also printed alone by ``compare --json``).
#: 1: the fixed-suite stratified comparison with its gate (report schema 3).
#: 2: criteria keyed by their one name (report schema 4).
COMPARISON_SCHEMA_VERSION = 2

Verdict = Literal["improved", "regressed", "equivalent", "inconclusive"]

#: Five percentage points: the seed's "practical threshold", the smallest pass-rate change
#: worth acting on; a smaller one is not worth a decision even when it is real.
DEFAULT_THRESHOLD = 0.05


@dataclass(frozen=True)
class RateDiff(Record):
    """Candidate minus baseline for one rate; all None when a run did not record it."""

    baseline_rate: float | None
    candidate_rate: float | None
    delta: float | None
    ci: Interval | None


@dataclass(frozen=True)
class FixtureComparison(Record):
    fixture: str
    model: str
    baseline_n: int
    candidate_n: int
    baseline_errors: int
    candidate_errors: int
    baseline_rate: float
    candidate_rate: float
    delta: float
    ci: Interval | None
    verdict: Verdict
    disagreement: float
    #: criterion name -> its rate difference
    criteria: dict[str, RateDiff]
    #: measure -> Welch difference of means
    measures: dict[str, DiffSummary]
    trials_for_power: int | None


@dataclass(frozen=True)
class DiffAsSample(Record):
    """The overall difference with the fixtures as a sample of possible fixtures (t over
    per-fixture differences; reported with many fixtures, never gating)."""

    delta: float | None
    ci: Interval | None
    se: float | None
    df: float | None
    method: str


@dataclass(frozen=True)
class OverallComparison(Record):
    """The fixed-suite comparison the gate reads (see :mod:`harness.stats.compare`)."""

    strata: int
    baseline_rate: float | None
    candidate_rate: float | None
    delta: float | None
    ci: Interval | None
    verdict: Verdict
    method: str
    disagreement: float | None
    criteria: dict[str, RateDiff]
    trials_for_power: int | None
    random_fixtures: DiffAsSample | None


@dataclass(frozen=True)
class Missing(Record):
    """A fixture x model that only the other run scored, and why."""

    fixture: str
    model: str
    reason: str

    def label(self) -> str:
        return f"{self.fixture}:{self.model} ({self.reason})"


@dataclass(frozen=True)
class Gate(Record):
    """Whether ``--fail-on regression`` passes, with one reason per failure."""

    passed: bool
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class BaselineRun(Record):
    """Which run the candidate was compared with, as a person identifies it."""

    run_id: str
    agent: str
    models: tuple[str, ...]
    created_at: str


@dataclass(frozen=True)
class Comparison(Record):
    """The ``comparison`` object of a candidate report."""

    baseline: str
    #: The baseline run (None when its report could not be read: ``error`` says why).
    baseline_run: BaselineRun | None
    threshold: float
    fixtures: tuple[FixtureComparison, ...]
    overall: OverallComparison
    wins: int
    losses: int
    ties: int
    missing_in_candidate: tuple[Missing, ...]
    missing_in_baseline: tuple[Missing, ...]
    error: str | None
    gate: Gate
    schema_version: int = COMPARISON_SCHEMA_VERSION

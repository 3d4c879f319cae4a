"""A candidate run compared with a baseline run: per fixture x model, overall, the gate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.model.record import Interval, Record
from harness.model.summary import DiffSummary, SwarmVsSolo

#: Version of the comparison object (also printed alone by ``compare --json``).
#: 1: the fixed-suite stratified comparison with its gate (report schema 3).
#: 2: criteria keyed by their one name (report schema 4).
#: 3: ``cost``: the candidate/baseline ratio of mean cost per item, with its verdict;
#: ``sequential``: the anytime-valid verdict of a ``--trials auto`` run.
#: 4: cells (fixtures, missing ones, cost ratios) carry ``agent`` (report schema 7).
COMPARISON_SCHEMA_VERSION = 6

Verdict = Literal["improved", "regressed", "equivalent", "inconclusive"]

CostVerdict = Literal["cheaper", "same", "inconclusive", "costlier"]
#: Milder first: a candidate at least as costly never gets a verdict earlier in this order
#: (``same`` and ``inconclusive`` are not ordered with each other).
COST_VERDICTS: tuple[CostVerdict, ...] = ("cheaper", "same", "inconclusive", "costlier")
#: 20%: a cost change smaller than this is not worth a decision (a prompt tweak moves cost by
#: a few percent); the band is [1/1.2, 1.2] around a ratio of 1.
DEFAULT_COST_THRESHOLD = 0.20

#: What ``--fail-on`` can name (several at once, joined by ``,`` in the report), in order.
FAIL_ON = ("unresolved", "regression", "cost", "none")


def fail_on_parts(fail_on: str) -> tuple[str, ...]:
    """The gates a ``--fail-on`` value names: ``regression,cost`` -> both."""
    return tuple(part for part in fail_on.split(",") if part)


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


#: In a comparison's records, ``agent`` is the agent label both runs' cells share, or ""
#: when each run has one agent and those are what is compared (paired whatever their names).


@dataclass(frozen=True)
class FixtureComparison(Record):
    fixture: str
    agent: str
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
    """A fixture x agent x model that only the other run scored, and why."""

    fixture: str
    agent: str
    model: str
    reason: str

    def label(self) -> str:
        return f"{cell_label(self.fixture, self.agent, self.model)} ({self.reason})"


def cell_label(fixture: str, agent: str, model: str) -> str:
    """``fixture:model``, or ``fixture:agent:model`` where the agent is a dimension."""
    return ":".join(part for part in (fixture, agent, model) if part)


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
class CostRatio(Record):
    """Candidate/baseline ratio of mean cost per item for one fixture x model (``fixture``
    and ``model`` as in the rate comparison), or over the suite (``fixture`` ``*``: the
    equal-weight geometric mean of the fixtures' ratios; ``agent`` and ``model`` ``*`` too). ``se_log`` is the standard error
    of ``log(ratio)``; ``reason`` says why the ratio or interval is None."""

    fixture: str
    agent: str
    model: str
    n_base: int
    n_cand: int
    mean_base: float | None
    mean_cand: float | None
    ratio: float | None
    se_log: float | None
    df: float | None
    ci: Interval | None
    confidence: float
    verdict: CostVerdict
    reason: str | None
    method: str


@dataclass(frozen=True)
class CostComparison(Record):
    """How the candidate's cost per item compares with the baseline's (see
    :mod:`harness.stats.cost`): in ``usd`` when every compared item has a price, else in
    ``tokens``; ``complete`` False when some item's usage is a lower bound (``notes`` say
    which); ``gate`` is what ``--fail-on cost`` reads (fails on an overall ``costlier``)."""

    unit: Literal["usd", "tokens"]
    threshold: float
    fixtures: tuple[CostRatio, ...]
    overall: CostRatio
    complete: bool
    notes: tuple[str, ...]
    gate: Gate


@dataclass(frozen=True)
class SequentialVerdict(Record):
    """The suite's answer in a ``--trials auto`` run against a baseline, from its cells'
    anytime-valid sequences (Bonferroni: each cell at ``alpha / cells``): ``regressed`` as
    soon as a cell is, ``not-regressed`` when every cell is, else ``cap`` or ``stopped``.
    The gate reads this, not the fixed-sample verdict, whose interval is not valid after a
    data-dependent stop. ``regressed_cells``: ``fixture:model (after N trials)``."""

    status: str
    alpha: float
    cells: int
    regressed_cells: tuple[str, ...]
    method: str = "beta-binomial-mixture-product-bonferroni"


#: How a cell one run did not run is explained (``Missing.reason``).
NOT_RUN_BY = "not run by the "
#: Fewer shared cells than this: the verdict line warns the comparison has little power.
FEW_SHARED_CELLS = 3


def not_run(missing: Missing) -> bool:
    """Whether a cell is missing because one run did not run it (not because its items all
    errored): what ``--compare-shared-only`` forgives."""
    return missing.reason.startswith(NOT_RUN_BY)


@dataclass(frozen=True)
class SoloShift(Record):
    """One agent x model's swarm against its solo twin in both runs (``run --solo``): did a
    change make the swarm pay better? Informing only: no gate reads it."""

    agent: str
    model: str
    baseline: SwarmVsSolo | None
    candidate: SwarmVsSolo | None


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
    #: The cost comparison (None: a comparison that failed, or from before schema 3).
    cost: CostComparison | None = None
    #: ``--trials auto``: the sequential verdict the gate reads (None: fixed trials).
    sequential: SequentialVerdict | None = None
    #: ``--compare-shared-only``: only the cells both runs ran count; one the other run
    #: did not run is listed as missing but fails no gate (one whose items all errored
    #: still does).
    shared_only: bool = False
    #: Cells (fixture x agent x model) the baseline scored: what "compared on N of M" counts.
    baseline_cells: int | None = None
    #: With solo twins in either run: the swarm against its twin in each (informing).
    solo: tuple[SoloShift, ...] = ()
    schema_version: int = COMPARISON_SCHEMA_VERSION

    def shared_line(self) -> str | None:
        """``compared on 2 of 11 baseline cells (--compare-shared-only: ...)``, or None."""
        if not self.shared_only:
            return None
        line = (
            f"compared on {len(self.fixtures)} of {self.baseline_cells or 0} baseline "
            "cells (--compare-shared-only: cells only one run ran are not compared)"
        )
        if len(self.fixtures) < FEW_SHARED_CELLS:
            line += f"; with fewer than {FEW_SHARED_CELLS} cells the verdict has little power"
        return line

    def failing(self, fail_on: tuple[str, ...]) -> tuple[str, ...]:
        """Why the gates ``fail_on`` names fail (empty: they pass): the rate gate
        (``regression``) and the cost gate (``cost``: an overall ``costlier``)."""
        reasons: tuple[str, ...] = ()
        if "regression" in fail_on:
            reasons += self.gate.reasons
        if "cost" in fail_on:
            if self.cost is None:
                reasons += (f"no cost comparison: {self.error or 'the baseline has none'}",)
            else:
                reasons += self.cost.gate.reasons
        return reasons

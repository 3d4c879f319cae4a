"""Aggregates of a run: per fixture x agent x model, and per agent x model over the fixed
suite.

The statistics (:mod:`harness.stats`) build these records; report.json holds their
``to_dict`` form and ``from_dict`` reads it back. Criteria keys come from the scorer's
registry; nothing here names a criterion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.model.record import Interval, Record

#: Efficiency figures summarised per fixture x model (mean, sd and t interval) and compared
#: between runs (Welch): the item's cost, fields of its score, of the score's efficiency or
#: of the run facts (:meth:`harness.model.item.ItemResult.measure`).
MEASURES = (
    "tokens_used",
    "cost_usd",
    "turns",
    "wall_time_s",
    "tokens_per_shard",
    "children_share",
    "spawn_overhead",
    "peak_parallel_children",
    "busy_over_wall",
)


@dataclass(frozen=True)
class RateEntry(Record):
    """A count out of the scored items with its rate and 95% interval (None without any)."""

    count: int
    rate: float | None
    ci: Interval | None


@dataclass(frozen=True)
class MeanSummary(Record):
    """Mean of ``n`` values with its sample sd (ddof=1) and t interval; None where the data
    cannot define them (see :mod:`harness.stats.rates`)."""

    n: int
    mean: float | None
    sd: float | None
    ci: Interval | None
    confidence: float


@dataclass(frozen=True)
class DiffSummary(Record):
    """Candidate-minus-baseline difference ``delta`` with its SE, t df and interval.

    ``n_base``/``n_cand`` count the observations in each arm; for a paired difference both
    are the number of pairs (fixtures).
    """

    n_base: int
    n_cand: int
    delta: float | None
    se: float | None
    df: float | None
    ci: Interval | None
    confidence: float


@dataclass(frozen=True)
class PerResolved(Record):
    """Total cost (USD or tokens) over the resolved items of a set of trials (one fixture x
    model, or an agent x model's over its fixtures): ``value = total / resolved`` with its
    interval (``method``; see :mod:`harness.stats.per_resolved`); ``value`` None with no
    resolved item; ``reason`` says why a part is missing. ``ci[1]`` None: unbounded above,
    as Fieller's interval (``fieller-adjusted-rate``) of earlier reports could be; the
    current method always bounds it."""

    n: int
    resolved: int
    total: float
    value: float | None
    ci: tuple[float, float | None] | None
    confidence: float
    reason: str | None
    method: str = "mover-log-wilson"


@dataclass(frozen=True)
class SequentialCell(Record):
    """How a fixture x model of a ``--trials auto`` run ended (:mod:`harness.stats.sequential`).

    ``question``: ``regression`` (against the baseline's ``(resolved, scored)``) or
    ``rate`` (no baseline). ``status``: ``regressed``, ``not-regressed``, ``precise``,
    ``cap`` (undecided at ``max_trials``) or ``stopped`` (the run ended first: interrupted,
    out of budget); ``stop_reason`` is ``decided``, ``precise``, ``cap`` or ``stopped``.
    ``trials``: outcomes in the sequence (scored, in launch order), ``launched``: trials
    started (errored ones included), ``decided_at``: trials when it decided. ``lower`` /
    ``upper``: the anytime-valid bounds of the candidate-minus-baseline difference (or of
    the rate), at the cell's ``alpha``. ``fixed_trials``: trials per run a fixed design
    needs for the power this cell's design had at the observed rate (None: no baseline, or
    out of reach)."""

    question: Literal["regression", "rate"]
    status: str
    stop_reason: str
    trials: int
    launched: int
    decided_at: int | None
    lower: float
    upper: float
    alpha: float
    min_trials: int
    max_trials: int
    baseline: tuple[int, int] | None
    fixed_trials: int | None = None


@dataclass(frozen=True)
class Estimate(Record):
    """A paired estimate and its 95% interval (None: the data cannot bound it)."""

    value: float | None
    ci: Interval | None


@dataclass(frozen=True)
class SwarmVsSolo(Record):
    """Whether the swarm pays, against its solo twin (``run --solo``), paired by fixture,
    model and trial: ``speedup`` is solo wall time over swarm wall time, ``tokens_ratio``
    and ``cost_ratio`` swarm over solo (ratios of means), ``resolved_diff`` the swarm's
    resolved rate minus the twin's. Over a suite, fixtures are the units of the intervals.

    ``pairs`` counts the pairs used; ``excluded`` the items left out, by why: ``errored``
    (either arm could not run), ``delegated`` (the solo twin started subagents anyway),
    ``unpaired`` (an item without its twin). ``cost_ratio`` is None unless every pair is
    priced. Informing measures: no gate reads them."""

    solo_agent: str
    pairs: int
    excluded: dict[str, int]
    speedup: Estimate
    tokens_ratio: Estimate
    cost_ratio: Estimate
    resolved_diff: Estimate


@dataclass(frozen=True)
class FixtureSummary(Record):
    """One fixture x agent x model of a run: errored items are counted and kept out of every
    rate."""

    fixture: str
    agent: str
    model: str
    n: int
    errors: int
    errored_keys: tuple[str, ...]
    resolved: int
    rate: float | None
    ci: Interval | None
    #: criterion name -> its pass count and rate over the items that recorded it
    criteria: dict[str, RateEntry]
    #: measure (:data:`MEASURES`) -> its mean over the scored items
    measures: dict[str, MeanSummary]
    pass_at_k: dict[str, float]
    pass_hat_k: dict[str, float]
    #: USD per resolved item (None: some scored item has no price); tokens per resolved item
    cost_per_resolved_usd: PerResolved | None = None
    tokens_per_resolved: PerResolved | None = None
    #: Scored items without a cost (a model without a known price)
    unpriced: int = 0
    #: False when some scored item's usage is a lower bound (and so are the sums)
    usage_complete: bool = True
    #: ``--trials auto``: why the cell stopped (decided, precise, cap, stopped) and how
    #: its sequence ended; None in a run with a fixed number of trials.
    stop_reason: str | None = None
    sequential: SequentialCell | None = None
    #: With ``--solo``: the swarm against its solo twin on this fixture (None on a twin's
    #: own row, and in a run without twins).
    swarm_vs_solo: SwarmVsSolo | None = None


@dataclass(frozen=True)
class FixturesAsSample(Record):
    """The overall rate with the fixtures treated as a sample of possible fixtures
    (cluster-robust; reported with many fixtures, never gating)."""

    rate: float | None
    se: float | None
    ci: Interval | None
    method: str


@dataclass(frozen=True)
class ModelOverall(Record):
    """One agent x model over the fixed suite: the equal-weight mean of its fixtures' rates."""

    agent: str
    model: str
    strata: int
    n: int
    n_effective: float
    rate: float
    ci: Interval | None
    confidence: float
    method: str
    resolved: int
    random_fixtures: FixturesAsSample | None
    #: With ``--solo``: the swarm against its solo twin over the suite.
    swarm_vs_solo: SwarmVsSolo | None = None


@dataclass(frozen=True)
class FailureGroup(Record):
    """Items that failed the same way: a criterion and a failure kind stable across trials
    (``coverage`` / ``events-03 wrong``), or ``error`` and the cause of an item that could
    not run. ``keys`` are the items', in run order."""

    criterion: str
    signature: str
    keys: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.criterion}: {self.signature} ×{len(self.keys)}"

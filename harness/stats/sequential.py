"""Anytime-valid sequential trials (``--trials auto``): decide a cell from its trials one by one.

A cell (fixture x model) runs the agent trial after trial; each trial resolves (``True``) or
not. After every trial the cell asks one question and stops as soon as it is answered:

- **With a baseline** (a finished earlier run of the same cell, ``x_b`` successes of ``n_b``
  trials, whose rate is itself uncertain): is the candidate worse than the baseline by more
  than ``margin`` (``"regressed"``: ``p_c - p_b < -margin``) or no worse than ``threshold``
  (``"not-regressed"``: ``p_c - p_b > -threshold``)? ``margin`` defaults to ``threshold``
  (so the two answers exclude each other); ``margin=0`` asks "is it worse at all?", like
  :func:`harness.stats.verdict`.
- **Without a baseline**: is the cell's rate known to within ``precision`` (``"precise"``: the
  half-width of its confidence sequence, :func:`rate_cs`, is at most ``precision``)? The
  sequence is the pair of one-sided mixtures below, each at alpha/2.

Undecided at ``max_trials`` the cell ends at the cap (inconclusive).

Validity under continuous monitoring
-----------------------------------
Every bound here comes from a nonnegative test martingale and Ville's (1939) inequality,
``P(sup_t M_t >= 1/a) <= E[M_0] a``, so it holds at every trial count at once: the cell may
look after every trial, stop when it likes, and add trials that were still running when it
stopped, and still

- P(the cell *ever* says "regressed" while ``p_c - p_b >= -margin``) <= ``alpha``, and
- P(the cell *ever* says "not-regressed" while ``p_c - p_b <= -threshold``) <= ``alpha``,

``alpha`` being the cell's share (:func:`cell_alpha`); each decision has its own side, so
each gets the whole of it. The bounds kept are running extrema (the running intersection
of the sequence), so the interval never widens, and a decision, once made, is frozen:
later trials update the counts and the interval, never the decision.

Construction: a product of e-values, infimum over the null
---------------------------------------------------------
For a rate p and ``S`` successes in ``t`` trials (``F = t - S``), Robbins' (1970)
beta-binomial mixture of likelihood ratios, with the prior Beta(a, b) truncated to one side
of p (the one-sided mixture of Howard, Ramdas, McAuliffe & Sekhon 2021)::

    M-_t(p) = B(a+S, b+F) I_p(a+S, b+F) / (B(a,b) I_p(a,b) p^S (1-p)^F)   (prior on q <= p)

is a test martingale under p (``I_p`` the regularised incomplete beta, via scipy's
``betaln``/``betainc``); it measures evidence that the rate is *below* p. Its mirror image
(successes <-> failures) measures evidence that it is above. Prior: uniform, a = b = 1
(:data:`PRIOR`).

- The candidate's stream gives ``M_c(p_c) = M-_t(p_c)``: a test martingale in t.
- The finished baseline gives ``E_b(p_b)``, the mirror-image mixture at its fixed n_b: an
  e-value (expectation 1 under p_b), known before the candidate's first trial.
- The samples are independent, so ``E_b(p_b) M_c(p_c)`` is a test martingale for every pair
  (Vovk & Wang 2021: products of independent e-values). The cell says "regressed" once
  ``inf { E_b(p_b) M_c(p_c) : p_c - p_b >= -margin } >= 1/alpha``: whatever the true pair
  in that null, its own martingale is then >= 1/alpha, which Ville bounds by alpha. This
  infimum is an e-process for the composite null (Ramdas, Grunwald, Vovk & Shafer 2023).
  "Not-regressed" is the mirror image. :func:`delta_bounds` turns the same test into a
  confidence sequence for ``p_c - p_b``; the decisions read it.

The infimum is taken rigorously on a grid (:data:`GRID`): M-_t rises in p from S/t on (the
tests check it for n <= 300) and never falls below a(a+S)^-1 anywhere (a lemma for b <= 1,
see :func:`_below_evidence`), so each grid cell's minimum has a lower bound and the bounds
are rounded outwards. Everything depends on the trials only through their counts, so the
order of the trials is irrelevant and tables per count are cached.

Why this and not the alternatives (exact operating characteristics in RESULTS.md,
``compare_methods.py``): the textbook union bound (a two-sided Robbins sequence for p_c at
alpha/2 and a Clopper-Pearson interval for p_b at alpha/2, delta in
``[L_c - U_b, U_c - L_b]``) adds the two arms' widths: each arm must be wide enough on its
own, so a regression is flagged only when the candidate's bound alone clears the baseline's
worst case. Its A/A error is 0.05% against 5% allowed. One-sided sequences, the Jeffreys
prior, Howard et al.'s prior centred on the null (as in confseq), other alpha splits or the
Waudby-Smith & Ramdas (2024) hedged betting sequence improve it by a few points at most.
The product multiplies the evidence of the two arms instead: it flags the end-to-end
collapse (baseline 12 trials at 0.9, candidate at 0.05, 2 fixtures, cap 20) in 5.2 trials
per fixture on average instead of 13.8, and at a 40-point drop from 0.8 has power 0.38
against 0.06 with a cap of 20 (0.90 against 0.37 with 3 fixtures and a cap of 40), at a
worst A/A error of 1.3%.

Suite (:func:`cell_alpha`, :func:`suite_rules`, :func:`overall_decision`): Bonferroni. Each
of the G cells that can say "regressed" gets ``alpha / G``; the suite says "regressed" as
soon as any cell does and "not-regressed" when every cell does, so both overall errors are
at most ``alpha`` (strong family-wise control, whatever the dependence between cells).
Averaging the cells' e-values instead is also valid and gains 2-4 points of power, but does
not say which fixture regressed.

What the caller must do (see RESULTS.md): feed outcomes in **launch order** (trial index),
not completion order (a failure that times out finishes last; completion order would bias
the early bounds upwards); exclude errored or unscored trials (never a failure here); on
resume, :func:`replay` the stored outcomes in launch order.

Missing and empty input: no trials gives the widest interval and no decision; an outcome
that is not a Python ``bool`` raises (``None`` or ``0.0`` must never pass as a failure); a
baseline with no trials raises (use ``baseline=None`` for the rate question); counts that
are impossible raise; alphas outside (0, 1) raise.

References:
    Ville (1939), Etude critique de la notion de collectif, Gauthier-Villars.
    Robbins (1970), "Statistical methods related to the law of the iterated logarithm",
        Ann. Math. Statist. 41(5):1397-1409.
    Howard, Ramdas, McAuliffe & Sekhon (2021), "Time-uniform, nonparametric, nonasymptotic
        confidence sequences", Ann. Statist. 49(2):1055-1080 (and "Time-uniform Chernoff
        bounds via nonnegative supermartingales", Probab. Surveys 17 (2020)).
    Vovk & Wang (2021), "E-values: calibration, combination and applications", Ann. Statist.
        49(3):1736-1754.
    Ramdas, Grunwald, Vovk & Shafer (2023), "Game-theoretic statistics and safe anytime-valid
        inference", Statist. Sci. 38(4):576-601.
    Waudby-Smith & Ramdas (2024), "Estimating means of bounded random variables by
        betting", J. R. Stat. Soc. B 86(1):1-27 (compared, not used).
    Clopper & Pearson (1934), Biometrika 26(4):404-413 (compared, not used).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

#: 95%: the convention readers expect next to an eval verdict; here it bounds the chance
#: that a suite *ever* calls an unchanged agent "regressed", however long it is watched.
DEFAULT_ALPHA = 0.05
#: Five points: the smallest pass-rate change worth acting on (harness.stats' threshold).
DEFAULT_THRESHOLD = 0.05
#: Ten points either side: a rate known that well ranks agents. It takes ~25 trials near 0
#: or 1 and over 100 near 1/2 (RESULTS.md), so with a cap of 20 it is rarely reached.
DEFAULT_PRECISION = 0.10
#: Two trials before any decision: one trial is never a measurement of a rate.
DEFAULT_MIN_TRIALS = 2
#: Twenty trials: the cap the fixed design runs today.
DEFAULT_MAX_TRIALS = 20
#: Uniform prior Beta(1, 1), Robbins' (1970) choice: with the product construction it has
#: the best power of the priors compared at 20-40 trials (Jeffreys: up to 8 points less at
#: 20-40 point drops, 0.3 trials faster on the end-to-end collapse; compare_methods.py). The
#: floor used off the near side needs b <= 1 (see _below_evidence).
PRIOR = (1.0, 1.0)
#: Bounds within this of a decision line are read as on it, so float noise never decides;
#: the same value as harness.stats.VERDICT_TOLERANCE.
DECISION_TOLERANCE = 1e-9
#: Bisection halvings for a bound: 2**-64 is below float spacing, so the bound is exact to
#: the last bit, and is rounded outwards (the reported bound is never inside the set).
_BISECTION_STEPS = 64

Decision = Literal["regressed", "not-regressed", "precise"]
Status = Literal["regressed", "not-regressed", "precise", "cap", "running"]
Interval = tuple[float, float]
Side = Literal["upper", "lower", "two"]
Prior = tuple[float, float] | Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


# --- validation --------------------------------------------------------------------------------


def _check_alpha(alpha: float, what: str = "alpha") -> None:
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise ValueError(f"{what} must be strictly between 0 and 1, got {alpha!r}")


def _check_counts(successes: int, n: int, what: str = "") -> None:
    label = f"{what} " if what else ""
    if not (isinstance(successes, (int, np.integer)) and isinstance(n, (int, np.integer))):
        raise ValueError(f"{label}counts must be integers, got {successes!r}/{n!r}")
    if isinstance(successes, bool) or isinstance(n, bool):
        raise ValueError(f"{label}counts must be integers, not bools")
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"{label}counts need 0 <= successes <= n, got {successes}/{n}")


def _check_outcome(outcome: object) -> bool:
    # Strict: None, NaN or a stray 0.0 must never pass as "failed".
    if not isinstance(outcome, (bool, np.bool_)):
        raise ValueError(f"outcomes must be bools; exclude errored trials first, got {outcome!r}")
    return bool(outcome)


# --- the candidate's confidence sequence ----------------------------------------------------


def _log_mixture(
    successes: ArrayLike, n: ArrayLike, p: ArrayLike, side: Side, prior: Prior = PRIOR
) -> np.ndarray:
    """log M_t(p): the beta-binomial mixture martingale at null ``p`` (see module doc).

    ``side="upper"`` mixes over q <= p (evidence that the rate is below p: rejects p from
    above), ``"lower"`` over q >= p, ``"two"`` over all q (Robbins' two-sided mixture, kept
    for the comparison script). ``prior`` is ``(a, b)`` or a function of ``p`` returning
    them (Howard et al.'s prior centred on the null, for the cross-check with confseq).
    """
    s = np.asarray(successes, dtype=float)
    f = np.asarray(n, dtype=float) - s
    p = np.asarray(p, dtype=float)
    a, b = prior(p) if callable(prior) else prior
    with np.errstate(divide="ignore", invalid="ignore"):
        log_lik = special.xlogy(s, p) + special.xlog1py(f, -p)
        log_mix = special.betaln(a + s, b + f) - special.betaln(a, b)
        if side == "upper":
            log_mix = (
                log_mix
                + np.log(special.betainc(a + s, b + f, p))
                - np.log(special.betainc(a, b, p))
            )
        elif side == "lower":
            log_mix = (
                log_mix
                + np.log(special.betaincc(a + s, b + f, p))
                - np.log(special.betaincc(a, b, p))
            )
        elif side != "two":
            raise ValueError(f"side must be 'upper', 'lower' or 'two', got {side!r}")
    return np.asarray(log_mix - log_lik, dtype=float)


def _mixture_bounds(
    successes: np.ndarray | int,
    n: np.ndarray | int,
    alpha: float,
    *,
    sides: Literal["one", "two"] = "one",
    prior: Prior = PRIOR,
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised bounds ``{p : M_t(p) < 1/alpha}`` by bisection, rounded outwards.

    ``sides="one"``: each bound from its own one-sided mixture at ``alpha``; ``"two"``: both
    from the two-sided mixture at ``alpha``. n == 0 gives (0, 1); S == 0 a lower bound of
    exactly 0, S == n an upper bound of exactly 1.
    """
    s, m = np.broadcast_arrays(np.asarray(successes, float), np.asarray(n, float))
    threshold = math.log(1.0 / alpha)
    phat = np.divide(s, m, out=np.zeros(s.shape), where=m > 0)
    up_side: Side = "upper" if sides == "one" else "two"
    low_side: Side = "lower" if sides == "one" else "two"
    # Upper: M(p) < 1/alpha on [phat, U) and >= beyond (the mixture is at most 1 at phat).
    inside, outside = phat.copy(), np.ones(s.shape)
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (inside + outside)
        ok = _log_mixture(s, m, mid, up_side, prior) < threshold
        inside, outside = np.where(ok, mid, inside), np.where(ok, outside, mid)
    upper = np.where(s >= m, 1.0, outside)
    inside, outside = phat.copy(), np.zeros(s.shape)
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (inside + outside)
        ok = _log_mixture(s, m, mid, low_side, prior) < threshold
        inside, outside = np.where(ok, mid, inside), np.where(ok, outside, mid)
    lower = np.where(s <= 0, 0.0, outside)
    return lower, upper


@lru_cache(maxsize=1 << 16)
def _cached_bounds(successes: int, n: int, alpha: float) -> Interval:
    lower, upper = _mixture_bounds(successes, n, alpha)
    return (float(lower), float(upper))


def rate_bounds(successes: int, n: int, alpha: float) -> Interval:
    """One-sided time-uniform bounds ``(L, U)`` on a rate after ``successes`` of ``n`` trials.

    Each holds at every n at once with probability >= 1 - ``alpha`` (so the pair covers at
    1 - 2 alpha; :func:`rate_cs` is the two-sided sequence). n == 0 gives (0.0, 1.0). The
    bounds always contain ``successes / n``.
    """
    _check_alpha(alpha)
    _check_counts(successes, n)
    return _cached_bounds(int(successes), int(n), float(alpha))


def rate_cs(successes: int, n: int, alpha: float = DEFAULT_ALPHA) -> Interval:
    """Two-sided (1 - ``alpha``) confidence sequence for a rate: each side at ``alpha / 2``."""
    _check_alpha(alpha)
    return rate_bounds(successes, n, alpha / 2.0)


@lru_cache(maxsize=32)
def bounds_table(max_n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rate_bounds` for every count: arrays ``[n, successes]`` of shape
    ``(max_n + 1, max_n + 1)``, NaN where successes > n. Read-only and cached: the bounds
    depend only on the counts, so a simulation or a planner looks them up."""
    _check_alpha(alpha)
    if max_n < 0:
        raise ValueError(f"max_n must be >= 0, got {max_n}")
    n = np.arange(max_n + 1)[:, None] * np.ones((1, max_n + 1))
    s = np.arange(max_n + 1)[None, :] * np.ones((max_n + 1, 1))
    valid = s <= n
    lower, upper = _mixture_bounds(np.where(valid, s, 0.0), n, alpha)
    lower, upper = np.where(valid, lower, np.nan), np.where(valid, upper, np.nan)
    lower.flags.writeable = False
    upper.flags.writeable = False
    return lower, upper


# --- the rate difference: a product of e-values, infimum over the null --------------------------

#: Grid steps per unit of rate. Bounds on ``p_c - p_b`` are multiples of ``1/GRID``, rounded
#: outwards, and the infimum over the baseline's unknown rate is bounded cell by cell (see
#: :func:`delta_bounds`): 2000 keeps 0.05 and 0.10 on the grid and widens a bound by at most
#: 1/2000 plus the evidence's change over one cell (about 0.01 in log-evidence at n = 40).
GRID = 2000
_POINTS = np.linspace(0.0, 1.0, GRID + 1)


@lru_cache(maxsize=64)
def _below_evidence(n: int, prior: tuple[float, float] = PRIOR) -> np.ndarray:
    """Lower bounds on log M-_n(p) at p = j/GRID for every success count: shape (n+1, GRID+1).

    M-_n(p) (evidence that the rate is *below* p) rises in p from S/n on (numerically
    verified, see tests), where the exact value is used; below S/n it is replaced by the floor
    log(a/(a+S)), a true lower bound for every p when the prior has b <= 1 (the law of q/p
    given q <= p then dominates Beta(a, 1), and (1-q)/(1-p) >= 1 there), which is also the
    limit at p -> 0. A running minimum from the right makes the array non-decreasing in p
    (so it can only move values down: still lower bounds).
    """
    a, b = prior
    if not (a > 0.0 and 0.0 < b <= 1.0):
        raise ValueError(f"the floor needs a prior with a > 0 and 0 < b <= 1, got {prior!r}")
    s = np.arange(n + 1, dtype=float)[:, None]
    floor = np.log(a / (a + s))
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = _log_mixture(s, float(n), _POINTS[None, :], "upper", prior)
    phat = s / n if n > 0 else np.zeros_like(s)
    values = np.where(_POINTS[None, :] >= phat, exact, floor)
    values[:, 0] = floor[:, 0]
    if np.isnan(values).any():  # pragma: no cover - would mean a numerical failure
        raise FloatingPointError(f"log-mixture undefined at n={n}")
    values = np.minimum.accumulate(values[:, ::-1], axis=1)[:, ::-1]
    values.flags.writeable = False
    return values


def _delta_upper(
    base: np.ndarray,
    base_n: int,
    successes: np.ndarray,
    n: int,
    alpha: float,
    prior: tuple[float, float] = PRIOR,
) -> np.ndarray:
    """Upper bounds on ``p_c - p_b`` for pairs (baseline successes, candidate successes).

    Psi(k) is a lower bound on the infimum of log E_b(p_b) + log M_c(p_c) over
    ``p_c - p_b >= k/GRID``: over each baseline cell [j, j+1]/GRID, the baseline's evidence
    (non-increasing: the mirror image of :func:`_below_evidence`) is at least its value at
    the cell's right end, and the candidate's (non-decreasing) at least its value at
    ``max(0, j + k)/GRID``. Psi rises in k; the bound is ``(k* + 1)/GRID`` with k* the
    largest k whose Psi is below ``log(1/alpha)``.
    """
    threshold = math.log(1.0 / alpha)
    base, successes = np.asarray(base), np.asarray(successes)

    def psi(k: np.ndarray) -> np.ndarray:
        return _psi(base, base_n, successes, n, k, prior)

    inside = np.full(len(successes), -GRID)  # psi(-GRID) <= both floors < threshold
    outside = np.full(len(successes), GRID + 1)  # sentinel: past delta = 1
    while np.any(outside - inside > 1):
        mid = (inside + outside) // 2
        ok = psi(mid) < threshold
        active = outside - inside > 1
        inside = np.where(active & ok, mid, inside)
        outside = np.where(active & ~ok, mid, outside)
    return np.minimum(1.0, (inside + 1) / GRID)


def _psi(
    base: np.ndarray,
    base_n: int,
    successes: np.ndarray,
    n: int,
    k: np.ndarray,
    prior: tuple[float, float] = PRIOR,
) -> np.ndarray:
    """Lower bound on the log e-value against ``p_c - p_b >= k/GRID``, row by row (pairs of
    baseline and candidate success counts; see :func:`_delta_upper`)."""
    # Evidence that p_b is above = the mirror image (successes <-> failures, p <-> 1 - p,
    # prior (a, b) <-> (b, a)) of evidence below.
    base_ev = _below_evidence(base_n, prior[::-1])[base_n - base, ::-1]  # non-increasing
    base_cell = base_ev[:, 1:]  # cell j: value at its right end, j = 0..GRID-1
    cand_ev = _below_evidence(n, prior)[successes]  # non-decreasing in p
    cells = np.arange(GRID)
    idx = np.clip(cells[None, :] + k[:, None], 0, GRID)
    total = base_cell + np.take_along_axis(cand_ev, idx, axis=1)
    total = np.where(cells[None, :] <= (GRID - k)[:, None], total, np.inf)
    return np.asarray(total.min(axis=1), dtype=float)


@lru_cache(maxsize=1 << 16)
def _delta_row(
    base: int, base_n: int, n: int, alpha: float, prior: tuple[float, float] = PRIOR
) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) bounds on the difference for every success count 0..n."""
    s = np.arange(n + 1)
    upper = _delta_upper(np.full(n + 1, base), base_n, s, n, alpha, prior)
    # Mirror: successes <-> failures maps p to 1 - p, the difference to its negative and
    # the prior (a, b) to (b, a).
    mirrored = _delta_upper(np.full(n + 1, base_n - base), base_n, n - s, n, alpha, prior[::-1])
    lower = -mirrored
    lower.flags.writeable = False
    upper.flags.writeable = False
    return lower, upper


def delta_bounds(
    base_successes: int, base_n: int, successes: int, n: int, alpha: float
) -> Interval:
    """One-sided time-uniform bounds ``(L, U)`` on ``p_c - p_b``, each at ``alpha``.

    The baseline (``base_successes`` of ``base_n``, finished) and the candidate (``successes``
    of ``n`` so far) each give a mixture likelihood ratio for every null value of their
    rate: an e-value for the baseline, a test martingale for the candidate. Their product
    is a test martingale (the samples are independent) for every pair ``(p_b, p_c)``, so by
    Ville's inequality the set of differences ``d`` whose infimum over ``p_c - p_b = d`` stays
    below ``1/alpha`` misses the true difference, at any time, with probability <= alpha
    (separately for each side). ``U`` uses the evidence that the candidate is lower and the
    baseline higher; ``L`` the reverse. Bounds are multiples of ``1/GRID`` rounded outwards.
    n == 0 gives the baseline's evidence alone; a baseline with no trials raises.
    """
    _check_alpha(alpha)
    _check_counts(base_successes, base_n, "baseline")
    _check_counts(successes, n, "candidate")
    if base_n == 0:
        raise ValueError("baseline has no trials; use baseline=None for the rate question")
    lower, upper = _delta_row(int(base_successes), int(base_n), int(n), float(alpha))
    return (float(lower[successes]), float(upper[successes]))


@lru_cache(maxsize=256)
def delta_table(
    base_successes: int, base_n: int, max_n: int, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`delta_bounds` for every candidate count: arrays ``[n, successes]`` of shape
    ``(max_n + 1, max_n + 1)``, NaN where successes > n; read-only, cached."""
    delta_bounds(base_successes, base_n, 0, 0, alpha)  # validates
    lower = np.full((max_n + 1, max_n + 1), np.nan)
    upper = np.full((max_n + 1, max_n + 1), np.nan)
    for n in range(max_n + 1):
        lower[n, : n + 1], upper[n, : n + 1] = _delta_row(
            int(base_successes), int(base_n), n, float(alpha)
        )
    lower.flags.writeable = False
    upper.flags.writeable = False
    return lower, upper


# --- one cell -------------------------------------------------------------------------------


def cell_alpha(alpha: float, cells: int) -> float:
    """Bonferroni share of ``alpha`` for each of ``cells`` cells that can say "regressed"."""
    _check_alpha(alpha)
    if cells < 1:
        raise ValueError(f"need at least one cell, got {cells}")
    return alpha / cells


@dataclass(frozen=True)
class CellRule:
    """What a cell asks and at which error rate; fixed for the whole life of the cell.

    ``baseline``: ``(successes, trials)`` of the finished earlier run, or None for the rate
    question. ``alpha``: this cell's share (:func:`cell_alpha`). ``margin``: None means
    ``threshold``. ``max_trials`` only tells :func:`status` and :func:`wants_more` when to
    stop launching; trials added after it (items that were in flight) still count.
    """

    baseline: tuple[int, int] | None = None
    threshold: float = DEFAULT_THRESHOLD
    margin: float | None = None
    precision: float = DEFAULT_PRECISION
    alpha: float = DEFAULT_ALPHA
    min_trials: int = DEFAULT_MIN_TRIALS
    max_trials: int = DEFAULT_MAX_TRIALS

    def __post_init__(self) -> None:
        _check_alpha(self.alpha)
        if self.baseline is not None:
            x_b, n_b = self.baseline
            _check_counts(x_b, n_b, "baseline")
            if n_b == 0:
                raise ValueError("baseline has no trials; use baseline=None for the rate question")
        for name in ("threshold", "precision"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0.0 <= value <= 1.0):
                raise ValueError(f"{name} must be in [0, 1], got {value!r}")
        if self.margin is not None and not (
            math.isfinite(self.margin) and 0.0 <= self.margin <= 1.0
        ):
            raise ValueError(f"margin must be in [0, 1] or None, got {self.margin!r}")
        if self.min_trials < 1 or self.max_trials < self.min_trials:
            raise ValueError(
                f"need 1 <= min_trials <= max_trials, got {self.min_trials}, {self.max_trials}"
            )

    @property
    def compares(self) -> bool:
        """True for the regression question (a baseline is given)."""
        return self.baseline is not None

    @property
    def regression_margin(self) -> float:
        return self.threshold if self.margin is None else self.margin

    @property
    def side_alpha(self) -> float:
        """Alpha of each one-sided bound: the cell's alpha for the difference (each decision
        has its own side), half of it for the rate (a two-sided sequence)."""
        return self.alpha if self.compares else self.alpha / 2.0


@dataclass(frozen=True)
class CellState:
    """A cell after ``n`` trials in launch order.

    ``lower``/``upper`` bound ``p_c - p_b`` (compare) or ``p_c`` (rate): the running
    extrema of the per-trial bounds, so they never widen. They cross (``lower > upper``) only
    if the sequence has missed (probability <= alpha) or the trials are not identically
    distributed (the agent's rate drifted): :attr:`empty` says so. ``decision`` is frozen
    once made, at ``decided_at`` trials.
    """

    n: int
    successes: int
    lower: float
    upper: float
    decision: Decision | None = None
    decided_at: int | None = None

    @property
    def empty(self) -> bool:
        return self.lower > self.upper


def _interval(successes: int, n: int, rule: CellRule) -> Interval:
    """The per-trial bounds of what ``rule`` asks about, before the running intersection."""
    if rule.baseline is None:
        return rate_bounds(successes, n, rule.side_alpha)
    return delta_bounds(rule.baseline[0], rule.baseline[1], successes, n, rule.side_alpha)


def _decide(lower: float, upper: float, n: int, rule: CellRule) -> Decision | None:
    if n < rule.min_trials:
        return None
    tol = DECISION_TOLERANCE
    if rule.compares:
        # Regressed first: when margin < threshold both can hold, and a clear drop wins.
        if upper < -rule.regression_margin - tol:
            return "regressed"
        if lower > -rule.threshold + tol:
            return "not-regressed"
        return None
    # An empty intersection (lower > upper) is a miss or drift, never a precise rate.
    precise = lower <= upper and (upper - lower) / 2.0 <= rule.precision - tol
    return "precise" if precise else None


def start(rule: CellRule) -> CellState:
    """The cell before any trial: the widest bounds, no decision."""
    low, high = _interval(0, 0, rule)
    return CellState(0, 0, low, high)


def update(state: CellState, outcome: bool, rule: CellRule) -> CellState:
    """The cell after one more trial (the next in launch order). Pure.

    Trials after a decision (items that were already running) update the counts and the
    interval; the decision stays.
    """
    won = _check_outcome(outcome)
    n, successes = state.n + 1, state.successes + int(won)
    low, high = _interval(successes, n, rule)
    lower, upper = max(state.lower, low), min(state.upper, high)
    decision, decided_at = state.decision, state.decided_at
    if decision is None:
        decision = _decide(lower, upper, n, rule)
        decided_at = n if decision is not None else None
    return CellState(n, successes, lower, upper, decision, decided_at)


def replay(outcomes: Iterable[bool], rule: CellRule) -> CellState:
    """Rebuild a cell from its stored outcomes in launch order (for ``--resume``)."""
    state = start(rule)
    for outcome in outcomes:
        state = update(state, outcome, rule)
    return state


def status(state: CellState, rule: CellRule) -> Status:
    """The decision, else "cap" once ``max_trials`` trials are in, else "running"."""
    if state.decision is not None:
        return state.decision
    return "cap" if state.n >= rule.max_trials else "running"


def wants_more(state: CellState, rule: CellRule, in_flight: int = 0) -> bool:
    """Whether to launch another trial, given ``in_flight`` launched but not yet recorded."""
    if in_flight < 0:
        raise ValueError(f"in_flight must be >= 0, got {in_flight}")
    return state.decision is None and state.n + in_flight < rule.max_trials


# --- the suite -----------------------------------------------------------------------------


def suite_rules(
    baselines: Sequence[tuple[int, int] | None],
    *,
    alpha: float = DEFAULT_ALPHA,
    threshold: float = DEFAULT_THRESHOLD,
    margin: float | None = None,
    precision: float = DEFAULT_PRECISION,
    min_trials: int = DEFAULT_MIN_TRIALS,
    max_trials: int = DEFAULT_MAX_TRIALS,
) -> tuple[CellRule, ...]:
    """One rule per cell, ``alpha`` split by Bonferroni over the cells with a baseline.

    Cells without a baseline (rate cells) get ``alpha`` each: a per-cell 95% sequence (they
    raise no alarm, so there is no family-wise error to control).
    """
    _check_alpha(alpha)
    compared = sum(b is not None for b in baselines)
    share = cell_alpha(alpha, compared) if compared else alpha
    return tuple(
        CellRule(
            baseline=b,
            threshold=threshold,
            margin=margin,
            precision=precision,
            alpha=alpha if b is None else share,
            min_trials=min_trials,
            max_trials=max_trials,
        )
        for b in baselines
    )


def overall_decision(cells: Sequence[tuple[CellState, CellRule]]) -> Status:
    """The suite's answer from its cells' states.

    With at least one compare cell, only compare cells count: "regressed" as soon as any is
    (the others may be stopped), else "running" while any runs, else "not-regressed" if all
    are, else "cap". Without compare cells: "precise" if all rate cells are, "running" while
    any runs, else "cap". With the Bonferroni split (:func:`suite_rules`) both overall errors
    are at most ``alpha``. No cells raises.
    """
    if not cells:
        raise ValueError("no cells")
    compared = [(s, r) for s, r in cells if r.compares]
    voting = compared or list(cells)
    statuses = [status(s, r) for s, r in voting]
    if "regressed" in statuses:
        return "regressed"
    if "running" in statuses:
        return "running"
    final: Status = "not-regressed" if compared else "precise"
    return final if all(st == final for st in statuses) else "cap"


# --- operating characteristics -------------------------------------------------------------


@dataclass(frozen=True)
class OperatingCharacteristics:
    """Exact chances of each answer and the expected trials (decision or cap) of one cell."""

    p_regressed: float
    p_not_regressed: float
    p_cap: float
    expected_trials: float


def operating_characteristics(cand_rate: float, rule: CellRule) -> OperatingCharacteristics:
    """Exact operating characteristics of a compare cell at a true candidate rate, given
    the rule's (observed) baseline, up to ``rule.max_trials`` trials.

    Exact, by dynamic programming over (trials, successes) on :func:`delta_table`. A planner
    can raise ``max_trials`` by the trials in flight to include them.
    """
    if rule.baseline is None:
        raise ValueError("operating characteristics are computed for compare cells only")
    lower_t, upper_t = delta_table(
        rule.baseline[0], rule.baseline[1], rule.max_trials, rule.side_alpha
    )
    return first_passage(
        cand_rate,
        lower_t,
        upper_t,
        rule.regression_margin,
        rule.threshold,
        rule.min_trials,
        rule.max_trials,
    )


def first_passage(
    cand_rate: float,
    lower_t: np.ndarray,
    upper_t: np.ndarray,
    margin: float,
    threshold: float,
    min_trials: int,
    cap: int,
) -> OperatingCharacteristics:
    """The decision rule's exact operating characteristics for any bound tables
    ``[n, successes]`` (also used to compare constructions, compare_methods.py).

    Before ``min_trials`` the state also remembers whether either decision line was crossed
    (the running intersection keeps it); from then on a decision is the first crossing.
    """
    if not 0.0 <= cand_rate <= 1.0:
        raise ValueError(f"cand_rate must be in [0, 1], got {cand_rate!r}")
    tol = DECISION_TOLERANCE
    # mass[s, r, k]: undecided paths with s successes; r/k: regressed/not line crossed so far.
    mass = np.zeros((cap + 1, 2, 2))
    # Before any trial the bounds are the baseline's alone, and the running intersection
    # keeps them: a baseline that already rules a line out counts from the start.
    mass[0, int(upper_t[0, 0] < -margin - tol), int(lower_t[0, 0] > -threshold + tol)] = 1.0
    p_reg = p_not = expected = 0.0
    for n in range(1, cap + 1):
        nxt = np.zeros_like(mass)
        nxt[: n + 1] += mass[: n + 1] * (1.0 - cand_rate)
        nxt[1 : n + 1] += mass[:n] * cand_rate
        mass = nxt
        s = np.arange(n + 1)
        crossed_r = upper_t[n, s] < -margin - tol
        crossed_n = lower_t[n, s] > -threshold + tol
        if n < min_trials:  # remember crossings: the running bounds keep them
            flagged = np.zeros_like(mass)
            for r in (0, 1):
                for k in (0, 1):
                    to_r = np.maximum(r, crossed_r).astype(int)
                    to_k = np.maximum(k, crossed_n).astype(int)
                    np.add.at(flagged, (s, to_r, to_k), mass[s, r, k])
            mass = flagged
            continue
        reg = mass[s, 1, :].sum(axis=1) + (mass[s, 0, :].sum(axis=1) * crossed_r)
        not_reg = (mass[s, 0, 1] * ~crossed_r) + (mass[s, 0, 0] * (crossed_n & ~crossed_r))
        p_reg += float(reg.sum())
        p_not += float(not_reg.sum())
        expected += n * float(reg.sum() + not_reg.sum())
        keep = ~(crossed_r | crossed_n)
        undecided = mass[s, 0, 0] * keep
        mass = np.zeros_like(mass)
        mass[s, 0, 0] = undecided
    p_cap = float(mass.sum())
    expected += cap * p_cap
    return OperatingCharacteristics(p_reg, p_not, p_cap, expected)


def fixed_trials_for_same_power(
    target_power: float, fixed_power: Callable[[int], float], max_n: int = 20_000
) -> int | None:
    """Trials per fixture (in each run) at which a fixed design reaches ``target_power``.

    ``fixed_power(n)`` is the fixed design's exact power at ``n`` trials per fixture, e.g.
    ``lambda n: harness.stats.power.regression_power(rates, n, drop)`` (passed in so that
    this module needs nothing from the harness). Doubling, then bisection, as in
    ``harness.stats.power.trials_for_power`` (power is not exactly monotone in n, being
    discrete, so a slightly smaller n may reach it too). None beyond ``max_n``.
    """
    if not 0.0 < target_power <= 1.0:
        raise ValueError(f"target_power must be in (0, 1], got {target_power!r}")
    high = 1
    while fixed_power(high) < target_power:
        if high >= max_n:
            return None
        high = min(2 * high, max_n)
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        if fixed_power(mid) >= target_power:
            high = mid
        else:
            low = mid
    return high

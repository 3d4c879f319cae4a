"""Operating characteristics of the cost comparison, for the README's statistics tables.

Simulated with the very functions reports use (:mod:`harness.stats.cost`:
``log_ratio_arrays`` per fixture, ``combine_arrays`` over the suite, ``classify`` for the
verdict at the default 20% threshold). Item costs are lognormal with a coefficient of
variation (CV) of 0.3 or 0.8, the same CV in both runs; the fixtures' baseline mean costs
spread from $0.20 to $5.00 (scale does not matter: the interval is scale-equivariant).
Prints, over fixtures (G) x trials per fixture and run (n) x CV:

- "costlier" at equal cost: how often the verdict calls a candidate that costs the same
  costlier (a false alarm of ``--fail-on cost``; should be at most 5%);
- power at +50%: how often it calls "costlier" when every fixture's mean cost is 1.5x.

Then the cost-per-resolved-item interval (``per_resolved``: MOVER on the log scale from the
mean cost's t interval and the rate's Wilson interval, through ``per_resolved_arrays``):
its coverage of the true ``mean cost / rate`` at resolved rates 0.3-1 and 3-30 trials,
with unresolved items costing half, as much as or twice a resolved one, and how often its
lower limit falls below the mean cost's (never: a resolved item costs at least an item).
Every section is seeded: the same command prints the same tables.

    uv run python benchmarks/bench_cost_oc.py [--reps N] [--seed S]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from scipy import special

from harness.model.comparison import DEFAULT_COST_THRESHOLD
from harness.stats.cost import (
    CHEAPER,
    COSTLIER,
    DEFAULT_CONFIDENCE,
    classify,
    combine_arrays,
    log_ratio_arrays,
)
from harness.stats.per_resolved import per_resolved_arrays

FIXTURES = (1, 2, 5)
TRIALS = (3, 5, 10, 20)
CVS = (0.3, 0.8)
#: The true ratio of the power column: every fixture 50% dearer.
POWER_RATIO = 1.5
RESOLVED_RATES = (0.3, 0.5, 0.7, 0.9, 1.0)
RESOLVED_TRIALS = (3, 5, 10, 30)
#: Cost CV of the cost-per-resolved section.
RESOLVED_CV = 0.5
#: An unresolved item's mean cost over a resolved one's: cheaper (gave up early), the same,
#: dearer (ran into the timeout).
UNRESOLVED_COSTS = (0.5, 1.0, 2.0)
DEFAULT_REPS = 20_000
DEFAULT_SEED = 20261215


def lognormal_costs(
    rng: np.random.Generator, mean: np.ndarray | float, cv: float, size: tuple[int, ...]
) -> np.ndarray:
    """Lognormal costs with mean ``mean`` and coefficient of variation ``cv``."""
    s2 = np.log1p(cv * cv)
    return rng.lognormal(np.log(mean) - s2 / 2.0, np.sqrt(s2), size)


def fixture_means(g: int) -> np.ndarray:
    """Baseline mean cost per fixture, USD: a factor of 25 apart at the ends."""
    return np.geomspace(0.2, 5.0, g) if g > 1 else np.array([1.0])


def simulate_costs(
    rng: np.random.Generator, g: int, n: int, cv: float, ratio: float, reps: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(baseline, candidate)`` costs, each ``reps x G x n``; the candidate's true mean is
    ``ratio`` times the baseline's on every fixture."""
    means = fixture_means(g)[None, :, None]
    base = lognormal_costs(rng, means, cv, (reps, g, n))
    cand = lognormal_costs(rng, ratio * means, cv, (reps, g, n))
    return base, cand


def verdict_codes(
    base: np.ndarray,
    cand: np.ndarray,
    threshold: float = DEFAULT_COST_THRESHOLD,
    confidence: float = DEFAULT_CONFIDENCE,
) -> np.ndarray:
    """The overall verdict code of each replicate (``reps x G x n`` costs in, ``reps``
    codes out), computed as ``compare_costs`` does: per fixture, over the suite, verdict."""
    n_b, n_c = base.shape[-1], cand.shape[-1]
    mb, vb = base.mean(axis=-1), base.var(axis=-1, ddof=1)
    mc, vc = cand.mean(axis=-1), cand.var(axis=-1, ddof=1)
    log_ratio, se, df, _, _ = log_ratio_arrays(mc, vc, n_c, mb, vb, n_b, confidence)
    est, _, _, low, high = combine_arrays(log_ratio, se, df, confidence)
    return classify(low, high, est, threshold)


def verdict_shares(
    g: int, n: int, cv: float, ratio: float, reps: int, seed: int = DEFAULT_SEED
) -> np.ndarray:
    """Share of each verdict code (``[cheaper, same, inconclusive, costlier]``) over
    ``reps`` simulated comparisons; seeded by the cell, so each cell is reproducible alone."""
    rng = np.random.default_rng([seed, g, n, round(100 * cv), round(100 * ratio)])
    base, cand = simulate_costs(rng, g, n, cv, ratio, reps)
    return np.bincount(verdict_codes(base, cand), minlength=4) / reps


@dataclass(frozen=True)
class OCRow:
    fixtures: int
    trials: int
    cv: float
    false_costlier: float
    false_cheaper: float
    power: float


def oc_table(reps: int, seed: int = DEFAULT_SEED) -> list[OCRow]:
    rows = []
    for g in FIXTURES:
        for cv in CVS:
            for n in TRIALS:
                equal = verdict_shares(g, n, cv, 1.0, reps, seed)
                dearer = verdict_shares(g, n, cv, POWER_RATIO, reps, seed)
                rows.append(OCRow(g, n, cv, equal[COSTLIER], equal[CHEAPER], dearer[COSTLIER]))
    return rows


@dataclass(frozen=True)
class CoverageRow:
    rate: float
    trials: int
    unresolved_cost: float
    defined: float
    coverage: float
    #: Replicates whose lower limit is below the mean cost's t interval's (should be none).
    below_item: float


def per_resolved_limits(
    costs: np.ndarray, resolved: np.ndarray, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """The limits ``per_resolved`` gives, for each row of ``reps x n`` trials (each row
    with at least one resolved); both NaN where no interval."""
    n = costs.shape[-1]
    x, y = resolved.astype(float), costs
    my, mx = y.mean(axis=-1), x.mean(axis=-1)
    sd = y.std(axis=-1, ddof=1)
    dy, dx = y - my[..., None], x - mx[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = (dy * dx).sum(axis=-1) / np.sqrt((dy * dy).sum(axis=-1) * (dx * dx).sum(axis=-1))
    corr = np.nan_to_num(corr)  # a constant cost or outcome: no correlation
    return per_resolved_arrays(my, sd, x.sum(axis=-1), n, corr, confidence)


def item_lower(costs: np.ndarray, confidence: float = DEFAULT_CONFIDENCE) -> np.ndarray:
    """The lower limit of each row's mean cost, t(n-1) (``rates.mean_interval``'s)."""
    n = costs.shape[-1]
    t = special.stdtrit(n - 1, 0.5 + confidence / 2.0)
    result: np.ndarray = costs.mean(axis=-1) - t * costs.std(axis=-1, ddof=1) / np.sqrt(n)
    return result


def simulate_trials(
    rate: float,
    n: int,
    reps: int,
    seed: int = DEFAULT_SEED,
    cv: float = RESOLVED_CV,
    unresolved_cost: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """``(costs, resolved)`` of ``reps x n`` trials: a resolved trial's mean cost 1, an
    unresolved one's ``unresolved_cost``; replicates with nothing resolved (no cost per
    resolved item) are left out."""
    rng = np.random.default_rng([seed, round(100 * rate), n, round(100 * unresolved_cost)])
    resolved = rng.random((reps, n)) < rate
    costs = lognormal_costs(rng, 1.0, cv, (reps, n))
    costs = np.where(resolved, costs, unresolved_cost * costs)
    keep = resolved.any(axis=1)
    return costs[keep], resolved[keep]


def per_resolved_coverage(
    rate: float,
    n: int,
    reps: int,
    seed: int = DEFAULT_SEED,
    cv: float = RESOLVED_CV,
    unresolved_cost: float = 1.0,
) -> CoverageRow:
    """Coverage of the cost-per-resolved interval of the true ``mean cost / rate``. Only
    replicates with something resolved have a value (``defined``: the share of them); no
    interval (zero spread) never covers."""
    costs, resolved = simulate_trials(rate, n, reps, seed, cv, unresolved_cost)
    low, high = per_resolved_limits(costs, resolved)
    truth = (rate + (1 - rate) * unresolved_cost) / rate
    covered = (low <= truth) & (truth <= high)  # NaN (no interval) compares False
    below = low < item_lower(costs) * (1 - 1e-12)
    return CoverageRow(
        rate,
        n,
        unresolved_cost,
        len(costs) / reps,
        float(covered.mean()),
        float(below.mean()),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=DEFAULT_REPS, help="replicates per cell")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()
    start = time.perf_counter()
    reps = args.reps

    print(
        f"Cost verdict (threshold {100 * DEFAULT_COST_THRESHOLD:.0f}%, lognormal costs), "
        f"{reps:,} replicates per cell"
    )
    print('cells: false "costlier" at equal cost / power ("costlier") at +50%')
    print("| fixtures | CV | " + " | ".join(f"n={n}" for n in TRIALS) + " |")
    print("|---|---|" + "---|" * len(TRIALS))
    rows = oc_table(reps, args.seed)
    for g in FIXTURES:
        for cv in CVS:
            cells = [r for r in rows if (r.fixtures, r.cv) == (g, cv)]
            print(
                f"| {g} | {cv} | "
                + " | ".join(f"{100 * r.false_costlier:.2f}% / {100 * r.power:.1f}%" for r in cells)
                + " |"
            )
    worst = max(rows, key=lambda r: r.false_costlier)
    worst_cheaper = max(rows, key=lambda r: r.false_cheaper)
    mc_se = np.sqrt(0.05 * 0.95 / reps)
    print(
        f'max false "costlier": {100 * worst.false_costlier:.2f}% (G={worst.fixtures}, '
        f"n={worst.trials}, CV {worst.cv}; Monte Carlo SE near 5%: "
        f"{100 * mc_se:.2f} points)"
    )
    print(
        f'max false "cheaper": {100 * worst_cheaper.false_cheaper:.2f}% '
        f"(G={worst_cheaper.fixtures}, n={worst_cheaper.trials}, CV {worst_cheaper.cv})"
    )
    print()
    print(
        f"Cost per resolved item: coverage of the {100 * DEFAULT_CONFIDENCE:.0f}% MOVER "
        f"interval (cost CV {RESOLVED_CV}); cells: coverage by an unresolved item's cost "
        "relative to a resolved one's"
    )
    print(
        "| resolved rate | trials | "
        + " | ".join(f"x{f}" for f in UNRESOLVED_COSTS)
        + " | lower below the item's |"
    )
    print("|---|---|" + "---|" * (len(UNRESOLVED_COSTS) + 1))
    for rate in RESOLVED_RATES:
        for n in RESOLVED_TRIALS:
            cells = [
                per_resolved_coverage(rate, n, reps, args.seed, unresolved_cost=f)
                for f in UNRESOLVED_COSTS
            ]
            print(
                f"| {rate} | {n} | "
                + " | ".join(f"{100 * c.coverage:.1f}%" for c in cells)
                + f" | {100 * max(c.below_item for c in cells):.1f}% |"
            )
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()

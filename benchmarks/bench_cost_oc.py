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

Then the coverage of the cost-per-resolved-item interval (``per_resolved``: Fieller's
interval with the rate's variance at Wilson's centre, through ``adjusted_rate_variance`` and
``fieller_arrays``) at resolved rates 0.7 and 0.9 and 5 and 10 trials, costs independent of
success. Every section is seeded: the same command prints the same tables.

    uv run python benchmarks/bench_cost_oc.py [--reps N] [--seed S]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from harness.model.comparison import DEFAULT_COST_THRESHOLD
from harness.stats.cost import (
    CHEAPER,
    COSTLIER,
    DEFAULT_CONFIDENCE,
    adjusted_rate_variance,
    classify,
    combine_arrays,
    fieller_arrays,
    log_ratio_arrays,
)

FIXTURES = (1, 2, 5)
TRIALS = (3, 5, 10, 20)
CVS = (0.3, 0.8)
#: The true ratio of the power column: every fixture 50% dearer.
POWER_RATIO = 1.5
RESOLVED_RATES = (0.7, 0.9)
RESOLVED_TRIALS = (5, 10)
#: Cost CV of the cost-per-resolved section.
RESOLVED_CV = 0.5
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
    defined: float
    coverage: float
    unbounded: float


def per_resolved_limits(
    costs: np.ndarray, resolved: np.ndarray, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """The limits ``per_resolved`` gives, for each row of ``reps x n`` trials (each row
    with at least one resolved): ``high`` +inf where unbounded, both NaN where no interval."""
    n = costs.shape[-1]
    x, y = resolved.astype(float), costs
    my, mx = y.mean(axis=-1), x.mean(axis=-1)
    syy = y.var(axis=-1, ddof=1)
    sxy = ((y - my[..., None]) * (x - mx[..., None])).sum(axis=-1) / (n - 1)
    sxx = adjusted_rate_variance(x.sum(axis=-1), n, confidence)
    return fieller_arrays(my, mx, syy, sxx, sxy, n, confidence)


def simulate_trials(
    rate: float, n: int, reps: int, seed: int = DEFAULT_SEED, cv: float = RESOLVED_CV
) -> tuple[np.ndarray, np.ndarray]:
    """``(costs, resolved)`` of ``reps x n`` trials: mean cost 1, independent of success;
    replicates with nothing resolved (no cost per resolved item) are left out."""
    rng = np.random.default_rng([seed, round(100 * rate), n])
    resolved = rng.random((reps, n)) < rate
    costs = lognormal_costs(rng, 1.0, cv, (reps, n))
    keep = resolved.any(axis=1)
    return costs[keep], resolved[keep]


def per_resolved_coverage(
    rate: float, n: int, reps: int, seed: int = DEFAULT_SEED, cv: float = RESOLVED_CV
) -> CoverageRow:
    """Coverage of the cost-per-resolved interval of the true ``mean cost / rate``. Only
    replicates with something resolved have a value (``defined``: the share of them); an
    interval unbounded above covers when its lower limit is at most the truth; no interval
    (zero spread) never covers."""
    costs, resolved = simulate_trials(rate, n, reps, seed, cv)
    low, high = per_resolved_limits(costs, resolved)
    truth = 1.0 / rate
    covered = (low <= truth) & (truth <= high)  # NaN (no interval) compares False
    return CoverageRow(
        rate, n, len(costs) / reps, float(covered.mean()), float(np.isinf(high).mean())
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
        f"Cost per resolved item: coverage of the {100 * DEFAULT_CONFIDENCE:.0f}% Fieller "
        f"interval (cost CV {RESOLVED_CV}, independent of success)"
    )
    print("| resolved rate | trials | defined | coverage | unbounded above |")
    print("|---|---|---|---|---|")
    for rate in RESOLVED_RATES:
        for n in RESOLVED_TRIALS:
            c = per_resolved_coverage(rate, n, reps, args.seed)
            print(
                f"| {rate} | {n} | {100 * c.defined:.1f}% | {100 * c.coverage:.1f}% | "
                f"{100 * c.unbounded:.1f}% |"
            )
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()

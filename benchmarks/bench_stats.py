"""Operating characteristics of the comparison gate, for the README's statistics tables.

Exact, not sampled: with equal trials per fixture the verdict depends on each run's total
successes only, so ``tests/harness/gate_grid.py`` sums over the two binomial totals with the
real ``stratified_rate`` / ``stratified_diff`` / ``verdict``. Prints, over fixture counts x
trials x true rates: A/A false-alarm rate ("regressed" when nothing changed), coverage of the
overall rate interval and of the overall difference interval; then the power table (share
of "regressed" for true drops of 10, 20 and 40 points from a baseline rate of 80%).

    uv run python benchmarks/bench_stats.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "harness"))

from gate_grid import characteristics

FIXTURES = (1, 2, 3, 5, 10)
TRIALS = (3, 5, 10, 30)
RATES = (0.05, 0.5, 0.9)
POWER_FIXTURES = (2, 3, 5, 10)
POWER_TRIALS = (5, 10, 30)
DROPS = (0.1, 0.2, 0.4)
#: Baseline rate of the power table: a typical good agent, with room for a 40-point drop.
POWER_BASE_RATE = 0.8


def main() -> None:
    start = time.perf_counter()
    print("A/A false alarms and coverage (exact), 95% intervals")
    print("| fixtures | trials | rate | A/A regressed | rate CI coverage | diff CI coverage |")
    print("|---|---|---|---|---|---|")
    worst = {"regressed": 0.0, "rate": 1.0, "diff": 1.0}
    for g in FIXTURES:
        for n in TRIALS:
            for p in RATES:
                c = characteristics(g, n, p)
                worst["regressed"] = max(worst["regressed"], c.regressed)
                worst["rate"] = min(worst["rate"], c.rate_coverage)
                worst["diff"] = min(worst["diff"], c.diff_coverage)
                print(
                    f"| {g} | {n} | {p:.2f} | {100 * c.regressed:.2f}% | "
                    f"{100 * c.rate_coverage:.1f}% | {100 * c.diff_coverage:.1f}% |"
                )
    print(
        f"worst: A/A regressed {100 * worst['regressed']:.2f}%, rate coverage "
        f"{100 * worst['rate']:.1f}%, diff coverage {100 * worst['diff']:.1f}%"
    )
    print()
    print(f"Power: share of 'regressed' for a true drop from {100 * POWER_BASE_RATE:.0f}% (exact)")
    print("| fixtures | trials | -10 pp | -20 pp | -40 pp |")
    print("|---|---|---|---|---|")
    for g in POWER_FIXTURES:
        for n in POWER_TRIALS:
            shares = [characteristics(g, n, POWER_BASE_RATE, drop).regressed for drop in DROPS]
            print(f"| {g} | {n} | " + " | ".join(f"{100 * s:.0f}%" for s in shares) + " |")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()

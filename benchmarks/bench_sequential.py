"""Operating characteristics of ``--trials auto`` (:mod:`harness.stats.sequential`), for the README.

Exact, not sampled, wherever a cell's figure is asked for: ``operating_characteristics`` is a
dynamic programme over the candidate's (trials, successes) on the very bound tables that
``update`` reads, here averaged over the baseline's binomial count (the baseline is a
finished earlier run of ``n_b`` trials at the same true rate). Cells are independent, so a
suite of G fixtures says "regressed" with probability ``1 - (1 - p_cell)^G`` (each cell at
``alpha / G``: ``suite_rules``' Bonferroni split). Prints:

- A/A: P(suite ever says "regressed") when nothing changed, for G fixtures x caps x rates,
  baseline ``n_b = cap``, the default margin (= threshold, 0.05) and margin 0, without and
  with 2 extra in-flight trials after the cap (decisions allowed up to cap + 2); then the
  worst over G;
- power and mean candidate trials per fixture for drops of 10, 20 and 40 points and a
  collapse to 0, from 0.8 and 0.95, against the trials per fixture in each run at which the
  fixed design (:func:`harness.stats.power.trials_for_power`, the harness' planner) reaches
  the same power;
- the end-to-end case (baseline 12 trials at 0.9 per fixture, candidate 0.05, cap 20, 2
  fixtures), exact and simulated: a seeded simulation through the real decision functions
  (``start``/``update``/``wants_more`` with a per-run ``CellRule``) gives the distribution of
  trials, which the programme does not.

    uv run python benchmarks/bench_sequential.py [--quick] [--runs N] [--seed S]

About a minute by default (the bound tables for 41 baseline counts at cap 40 dominate);
``--quick`` runs caps 10 and 20, G 1 and 3 and 2,000 simulated runs in a few seconds.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from harness.stats import sequential as sq
from harness.stats.power import trials_for_power

ALPHA = sq.DEFAULT_ALPHA
AA_FIXTURES = (1, 2, 3, 5)
AA_CAPS = (10, 20, 40)
AA_RATES = (0.5, 0.8, 0.95)
#: Trials still running when a cell stops (decided or capped), fed to update() afterwards.
IN_FLIGHT = 2
POWER_FIXTURES = (1, 3)
POWER_CAPS = (20, 40)
POWER_BASE_RATES = (0.8, 0.95)
#: Drops of the candidate's rate below the baseline's; None = a collapse to 0.
POWER_DROPS: tuple[float | None, ...] = (0.1, 0.2, 0.4, None)
#: Planner's power target is capped here (it needs power < 1); shown as ">=".
MAX_TARGET_POWER = 0.9999
#: The end-to-end case.
E2E_FIXTURES, E2E_BASE_TRIALS, E2E_BASE_RATE, E2E_CAND_RATE, E2E_CAP = 2, 12, 0.9, 0.05, 20
DEFAULT_RUNS = 10_000
QUICK_RUNS = 2_000
DEFAULT_SEED = 20240611


# --- one cell: exact ----------------------------------------------------------------------


def cell_rule(
    base_successes: int, base_trials: int, fixtures: int, cap: int, margin: float | None = None
) -> sq.CellRule:
    """The rule of one of ``fixtures`` compare cells, as ``suite_rules`` makes it."""
    return sq.suite_rules(
        [(base_successes, base_trials)] * fixtures, alpha=ALPHA, margin=margin, max_trials=cap
    )[0]


def baseline_weights(base_trials: int, base_rate: float) -> np.ndarray:
    """P(baseline successes = x), x = 0..base_trials."""
    return np.diff(special.bdtr(np.arange(base_trials + 1), base_trials, base_rate), prepend=0.0)


def exact_cell(
    cand_rate: float,
    base_rate: float,
    base_trials: int,
    fixtures: int,
    cap: int,
    margin: float | None = None,
    in_flight: int = 0,
) -> sq.OperatingCharacteristics:
    """Exact operating characteristics of one cell, averaged over the baseline's count
    ~ Bin(base_trials, base_rate). ``in_flight``: decisions allowed up to ``cap + in_flight``
    trials (the programme's horizon), as when items still running finish after the cap."""
    totals = np.zeros(4)
    for x, w in enumerate(baseline_weights(base_trials, base_rate)):
        if w == 0.0:
            continue
        rule = cell_rule(x, base_trials, fixtures, cap + in_flight, margin)
        oc = sq.operating_characteristics(cand_rate, rule)
        totals += w * np.array([oc.p_regressed, oc.p_not_regressed, oc.p_cap, oc.expected_trials])
    return sq.OperatingCharacteristics(*(float(t) for t in totals))


def suite_probability(p_cell: float, fixtures: int) -> float:
    """P(at least one of ``fixtures`` independent cells), each with ``p_cell``."""
    return 1.0 - (1.0 - p_cell) ** fixtures


# --- one cell: simulated through the real decision functions ------------------------------


@dataclass(frozen=True)
class Simulated:
    """Per run: the decision when the cell stopped launching (``wants_more`` false), the
    trials then, and the decision after ``in_flight`` more trials."""

    regressed: np.ndarray
    not_regressed: np.ndarray
    trials: np.ndarray
    regressed_late: np.ndarray


def simulate_cell(
    rng: np.random.Generator,
    cand_rate: float,
    base_rate: float,
    base_trials: int,
    fixtures: int,
    cap: int,
    runs: int,
    margin: float | None = None,
    in_flight: int = 0,
) -> Simulated:
    """``runs`` independent cells: baseline ~ Bin(base_trials, base_rate), the candidate's
    trials Bernoulli(cand_rate) fed one by one to ``update`` while ``wants_more``; then
    ``in_flight`` more (items that were running). Raises if a decision ever changes."""
    base = rng.binomial(base_trials, base_rate, runs)
    outcomes = rng.random((runs, cap + in_flight)) < cand_rate
    regressed = np.zeros(runs, dtype=bool)
    not_regressed = np.zeros(runs, dtype=bool)
    regressed_late = np.zeros(runs, dtype=bool)
    trials = np.zeros(runs, dtype=int)
    for i in range(runs):
        rule = cell_rule(int(base[i]), base_trials, fixtures, cap, margin)
        row = [bool(o) for o in outcomes[i]]
        state = sq.start(rule)
        while sq.wants_more(state, rule):
            state = sq.update(state, row[state.n], rule)
        stopped = state
        for outcome in row[state.n : state.n + in_flight]:
            state = sq.update(state, outcome, rule)
        if stopped.decision is not None and (state.decision, state.decided_at) != (
            stopped.decision,
            stopped.decided_at,
        ):
            raise AssertionError(f"a decision changed after it was made: {stopped} -> {state}")
        regressed[i] = stopped.decision == "regressed"
        not_regressed[i] = stopped.decision == "not-regressed"
        regressed_late[i] = state.decision == "regressed"
        trials[i] = stopped.n
    return Simulated(regressed, not_regressed, trials, regressed_late)


def standard_error(share: float, runs: int) -> float:
    return math.sqrt(max(share * (1.0 - share), 0.0) / runs)


# --- the fixed design ---------------------------------------------------------------------


def fixed_trials(
    base_rate: float, fixtures: int, drop: float, power: float, confidence: float
) -> str:
    """Trials per fixture in each run at which the fixed design reaches ``power``."""
    target = min(power, MAX_TARGET_POWER)
    n = trials_for_power([base_rate] * fixtures, drop, target, confidence)
    if n is None:
        return "-"
    return (">=" if target < power else "") + str(n)


# --- tables -------------------------------------------------------------------------------


def aa_tables(fixtures: Sequence[int], caps: Sequence[int], rates: Sequence[float]) -> list[str]:
    out = [
        '### A/A: P(suite ever says "regressed"), exact',
        "",
        f"Candidate rate = baseline rate; baseline n_b = cap trials; alpha {ALPHA} split over G "
        f"(Bonferroni). m=.05: the default margin (= threshold); m=0: any drop. +{IN_FLIGHT}: "
        f"{IN_FLIGHT} in-flight trials after the cap may still decide.",
        "",
        f"| G | cap | p | m=.05 | m=.05 +{IN_FLIGHT} | m=0 | m=0 +{IN_FLIGHT} |",
        "|---|---|---|---|---|---|---|",
    ]
    worst: dict[tuple[int, float], list[tuple[float, int]]] = {}
    for g in fixtures:
        for cap in caps:
            for p in rates:
                cols = []
                for margin in (None, 0.0):
                    for extra in (0, IN_FLIGHT):
                        cell = exact_cell(p, p, cap, g, cap, margin, extra).p_regressed
                        cols.append(suite_probability(cell, g))
                out.append(f"| {g} | {cap} | {p} | " + " | ".join(f"{c:.4f}" for c in cols) + " |")
                slots = worst.setdefault((cap, p), [(0.0, 0)] * len(cols))
                worst[(cap, p)] = [max(s, (c, g)) for s, c in zip(slots, cols, strict=True)]
    out += [
        "",
        "Worst over G (the G attaining it):",
        "",
        f"| cap | p | m=.05 | m=.05 +{IN_FLIGHT} | m=0 | m=0 +{IN_FLIGHT} |",
        "|---|---|---|---|---|---|",
    ]
    for (cap, p), cols_g in sorted(worst.items()):
        out.append(f"| {cap} | {p} | " + " | ".join(f"{c:.4f} (G={g})" for c, g in cols_g) + " |")
    overall = max(
        (c, g, cap, p, i) for (cap, p), cols_g in worst.items() for i, (c, g) in enumerate(cols_g)
    )
    column = ("m=.05", f"m=.05 +{IN_FLIGHT}", "m=0", f"m=0 +{IN_FLIGHT}")[overall[4]]
    out += [
        "",
        f"Worst A/A overall: {overall[0]:.4f} (G={overall[1]}, cap {overall[2]}, p {overall[3]}, "
        f"{column}); target <= {ALPHA}.",
        "",
    ]
    return out


def power_table(fixtures: Sequence[int], caps: Sequence[int]) -> list[str]:
    out = [
        "### Power and mean trials per fixture, exact, against the fixed design",
        "",
        "Candidate worse by `drop` on every fixture (collapse: to 0); baseline n_b = cap trials "
        'at p_b. Power = P(suite says "regressed"); trials = mean candidate trials per fixture '
        "at decision or cap (no early stop of the suite). Fixed n: trials per fixture in each "
        "run (baseline and candidate) at which `harness.stats.power.trials_for_power` reaches "
        "the sequential m=0 power (the fixed rule's question: any drop), at the harness' 95% "
        "confidence and at 90% (one-sided 5%, the nominal error of alpha here).",
        "",
        "| G | cap | p_b | drop | power m=.05 | trials | power m=0 | trials | fixed n @95% | fixed n @90% |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for g in fixtures:
        for cap in caps:
            for p_b in POWER_BASE_RATES:
                for drop in POWER_DROPS:
                    size = p_b if drop is None else drop
                    p_c = max(0.0, p_b - size)
                    cols: list[str] = []
                    power = 0.0
                    for margin in (None, 0.0):
                        oc = exact_cell(p_c, p_b, cap, g, cap, margin)
                        power = suite_probability(oc.p_regressed, g)
                        cols += [f"{power:.4f}", f"{oc.expected_trials:.1f}"]
                    label = "collapse" if drop is None else f"{drop:.1f}"
                    fixed = [fixed_trials(p_b, g, size, power, conf) for conf in (0.95, 0.90)]
                    out.append(
                        f"| {g} | {cap} | {p_b} | {label} | " + " | ".join(cols + fixed) + " |"
                    )
    out += [
        "",
        "The sequential run also relies on its baseline's n_b = cap trials; the fixed design "
        "spends fixed n in the baseline run and again in the candidate run.",
        "",
    ]
    return out


def e2e_table(rng: np.random.Generator, runs: int) -> list[str]:
    g, n_b, p_b, cap = E2E_FIXTURES, E2E_BASE_TRIALS, E2E_BASE_RATE, E2E_CAP
    out = [
        f"### End-to-end: baseline {n_b} trials at {p_b} per fixture, cap {cap}, {g} fixtures",
        "",
        f"Exact, and {runs:,} simulated suites through start/update/wants_more (seeded). "
        "Trials = candidate trials per fixture at decision or cap.",
        "",
        "| candidate | margin | P(suite regressed) exact | sim (±se) | mean trials exact | sim |",
        "|---|---|---|---|---|---|",
    ]
    detail: list[str] = []
    for p_c in (E2E_CAND_RATE, p_b):
        for margin in (None, 0.0):
            oc = exact_cell(p_c, p_b, n_b, g, cap, margin)
            sim = simulate_cell(rng, p_c, p_b, n_b, g, cap, runs * g, margin)
            suite = sim.regressed.reshape(runs, g).any(axis=1)
            share = float(suite.mean())
            mtxt = "0.05 (default)" if margin is None else "0"
            out.append(
                f"| {p_c} | {mtxt} | {suite_probability(oc.p_regressed, g):.4f} | "
                f"{share:.4f} (±{standard_error(share, runs):.4f}) | {oc.expected_trials:.2f} | "
                f"{sim.trials.mean():.2f} |"
            )
            if p_c == E2E_CAND_RATE and margin is None:
                used = sim.trials.reshape(runs, g)
                q = np.percentile(used, [10, 50, 90, 99])
                # The suite stops at its first regressed cell (cells in lockstep).
                first = np.where(sim.regressed.reshape(runs, g), used, cap).min(axis=1)
                detail = [
                    "",
                    f"Candidate {p_c}, default margin: trials per fixture percentiles 10/50/90/99 "
                    f"{q[0]:.0f}/{q[1]:.0f}/{q[2]:.0f}/{q[3]:.0f}; share of cells at the cap "
                    f"{(used == cap).mean():.3f}; a suite stopping at its first regressed cell "
                    f"(cells in lockstep) stops after {first.mean():.2f} trials per fixture on "
                    f"average (median {np.median(first):.0f}).",
                ]
    return [*out, *detail, ""]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer cells and runs")
    parser.add_argument("--runs", type=int, default=None, help="simulated suites (end-to-end)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    runs = args.runs or (QUICK_RUNS if args.quick else DEFAULT_RUNS)
    rng = np.random.default_rng(args.seed)
    aa_fixtures = (1, 3) if args.quick else AA_FIXTURES
    aa_caps = (10, 20) if args.quick else AA_CAPS
    power_caps = (20,) if args.quick else POWER_CAPS
    started = time.perf_counter()
    print(f"Seed {args.seed}; alpha {ALPHA}; prior {sq.PRIOR}; grid 1/{sq.GRID}.\n")
    sections: list[Callable[[], list[str]]] = [
        lambda: aa_tables(aa_fixtures, aa_caps, AA_RATES),
        lambda: power_table(POWER_FIXTURES, power_caps),
        lambda: e2e_table(rng, runs),
    ]
    for build in sections:
        t0 = time.perf_counter()
        part = build()
        print("\n".join(part) + f"({time.perf_counter() - t0:.1f} s)\n", flush=True)
    print(f"Total {time.perf_counter() - started:.1f} s.")


if __name__ == "__main__":
    main()

"""Aggregating item results into per-(fixture, model) and per-model summaries (polars).

Errored items (the harness could not run the agent, or the run was interrupted) are
counted in ``errors`` and listed, but kept out of every rate and mean: a missing result is
not a failure of the agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from harness import stats
from harness.shapes import FixtureSummary, ModelOverall, RateEntry
from harness.strata import stratified_rate
from scorers.criteria import criterion_fields

#: Fewest fixtures for the "fixtures as a random sample" interval: below this, the spread
#: between fixtures is estimated from too few values to say anything about other fixtures.
MIN_FIXTURES_FOR_GENERALISATION = 10


#: Efficiency figures reported as mean, sd and t interval.
MEASURES = ("tokens_used", "turns", "wall_time_s")


def items_frame(items: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """One row per item with the columns the summaries need."""
    schema = {
        "key": pl.String,
        "fixture": pl.String,
        "model": pl.String,
        "trial": pl.Int64,
        "status": pl.String,
        "resolved": pl.Boolean,
        **dict.fromkeys(criterion_fields(), pl.Boolean),
        "tokens_used": pl.Float64,
        "turns": pl.Float64,
        "wall_time_s": pl.Float64,
    }
    rows = [{name: item.get(name) for name in schema} for item in items]
    return pl.DataFrame(rows, schema=schema)


def _rate(successes: int, n: int) -> dict[str, Any]:
    """A fixture's rate with its (boundary-modified) Wilson interval; None without trials."""
    if n == 0:
        return RateEntry(0, None, None).to_dict()
    summary = stratified_rate([(successes, n)])
    return RateEntry(successes, summary.rate, list(summary.ci)).to_dict()


def _pass_k(n: int, c: int, trials: int) -> dict[str, dict[str, float]]:
    ks = range(1, min(n, trials) + 1)
    return {
        "pass_at_k": {str(k): stats.pass_at_k(n, c, k) for k in ks},
        "pass_hat_k": {str(k): stats.pass_hat_k(n, c, k) for k in ks},
    }


def summarize(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per fixture x model: n (scored), errors, resolved count/rate/Wilson CI, criteria, measures."""
    frame = items_frame(items)
    if frame.is_empty():
        return []
    groups = (
        frame.group_by("fixture", "model")
        .agg(
            pl.col("status").eq("error").sum().alias("errors"),
            pl.col("key").filter(pl.col("status") == "error").sort().alias("errored_keys"),
            pl.col("trial").n_unique().alias("trials"),
        )
        .sort("fixture", "model")
    )
    scored = frame.filter(pl.col("status") != "error")
    out: list[dict[str, Any]] = []
    for row in groups.iter_rows(named=True):
        sub = scored.filter(
            (pl.col("fixture") == row["fixture"]) & (pl.col("model") == row["model"])
        )
        n = sub.height
        resolved = int(sub["resolved"].sum()) if n else 0
        rate = _rate(resolved, n)
        entry = FixtureSummary(
            fixture=row["fixture"],
            model=row["model"],
            n=n,
            errors=int(row["errors"]),
            errored_keys=list(row["errored_keys"]),
            resolved=resolved,
            rate=rate["rate"],
            ci=rate["ci"],
            criteria={c: _rate(int(sub[c].sum()) if n else 0, n) for c in criterion_fields()},
            measures={
                m: stats.mean_interval(sub[m].drop_nulls().to_list()).to_dict() for m in MEASURES
            },
            **_pass_k(n, resolved, int(row["trials"])),
        )
        out.append(entry.to_dict())
    return out


def overall(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per model: the equal-weight mean of its fixtures' resolved rates, fixtures as strata.

    The interval is the stratified Wilson interval of the fixed suite (:mod:`harness.strata`).
    With many fixtures, ``random_fixtures`` adds the cluster-robust interval that treats the
    fixtures as a sample of possible fixtures (Miller 2024); it is reported, never gating.
    """
    frame = items_frame(items).filter(pl.col("status") != "error")
    out = []
    for model in sorted(frame["model"].unique().to_list()) if not frame.is_empty() else []:
        sub = frame.filter(pl.col("model") == model)
        outcomes = {
            fx: [bool(v) for v in sub.filter(pl.col("fixture") == fx)["resolved"].to_list()]
            for fx in sorted(sub["fixture"].unique().to_list())
        }
        summary = stratified_rate([(sum(v), len(v)) for v in outcomes.values()])
        random_fixtures = None
        if len(outcomes) >= MIN_FIXTURES_FOR_GENERALISATION:
            clustered = stats.clustered_rate(outcomes)
            random_fixtures = {
                "rate": clustered.rate,
                "se": clustered.se,
                "ci": None if clustered.ci is None else list(clustered.ci),
                "method": "cluster-robust-t",
            }
        data = summary.to_dict()
        out.append(
            ModelOverall(
                model=model,
                strata=data["strata"],
                n=data["n"],
                n_effective=data["n_effective"],
                rate=data["rate"],
                ci=data["ci"],
                confidence=data["confidence"],
                method=data["method"],
                resolved=int(sub["resolved"].sum()),
                random_fixtures=random_fixtures,
            ).to_dict()
        )
    return out

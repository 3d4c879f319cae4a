"""Candidate-vs-baseline comparison with intervals and verdicts.

Per fixture x model the two runs are independent binomial samples: the resolved-rate
difference gets Newcombe's hybrid score interval (method 10), never a trial-i-with-trial-i
"pairing" (those draws are independent, so such pairing means nothing). Overall, the runs
are paired at the fixture level: each fixture's rate difference is one observation and the
interval is a t interval across fixtures, which treats fixtures as clusters.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness import stats
from harness.aggregate import CRITERIA, MEASURES
from harness.errors import BundleError

Items = Sequence[Mapping[str, Any]]


def load_report(path: Path) -> dict[str, Any]:
    """A report.json, given the file or its run directory."""
    file = path / "report.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BundleError(f"{file}: no such report") from exc
    except (OSError, ValueError) as exc:
        raise BundleError(f"{file}: not a readable report.json ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise BundleError(f"{file}: items: missing or not a list")
    for i, item in enumerate(data["items"]):
        if not isinstance(item, dict) or not {"fixture", "model", "status", "resolved"} <= set(
            item
        ):
            raise BundleError(f"{file}: items[{i}]: missing fixture/model/status/resolved")
    data["_path"] = str(file)
    return data


def _scored(items: Items) -> list[Mapping[str, Any]]:
    return [i for i in items if i.get("status") != "error"]


def _group(items: Items, by_model: bool) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for item in _scored(items):
        key = (str(item["fixture"]), str(item["model"]) if by_model else "*")
        groups.setdefault(key, []).append(item)
    return groups


def _count(items: Sequence[Mapping[str, Any]], field: str) -> int:
    return sum(1 for i in items if i.get(field) is True)


def _rate_diff(
    base: Sequence[Mapping[str, Any]], cand: Sequence[Mapping[str, Any]], field: str
) -> dict[str, Any]:
    xb, nb, xc, nc = _count(base, field), len(base), _count(cand, field), len(cand)
    delta = xc / nc - xb / nb
    low, high = stats.newcombe_diff_interval(xb, nb, xc, nc)
    return {"baseline_rate": xb / nb, "candidate_rate": xc / nc, "delta": delta, "ci": [low, high]}


def _measure_diff(
    base: Sequence[Mapping[str, Any]], cand: Sequence[Mapping[str, Any]], field: str
) -> dict[str, Any]:
    a = [float(i[field]) for i in base if isinstance(i.get(field), (int, float))]
    b = [float(i[field]) for i in cand if isinstance(i.get(field), (int, float))]
    return stats.welch_interval(a, b).to_dict()


def _flips(
    base: Sequence[Mapping[str, Any]], cand: Sequence[Mapping[str, Any]]
) -> list[tuple[bool, bool]]:
    by_trial = {int(i["trial"]): bool(i["resolved"]) for i in base if "trial" in i}
    return [
        (by_trial[int(i["trial"])], bool(i["resolved"]))
        for i in cand
        if int(i.get("trial", -1)) in by_trial
    ]


def compare(
    baseline: Items, candidate: Items, threshold: float, baseline_label: str
) -> dict[str, Any]:
    """The ``comparison`` object of a candidate report (fixed fields documented in README)."""
    base_models = {str(i["model"]) for i in _scored(baseline)}
    cand_models = {str(i["model"]) for i in _scored(candidate)}
    by_model = not (len(base_models) == 1 and len(cand_models) == 1 and base_models != cand_models)
    base_g, cand_g = _group(baseline, by_model), _group(candidate, by_model)
    fixtures: list[dict[str, Any]] = []
    flips: list[tuple[bool, bool]] = []
    unmatched = sorted({f"{f}:{m}" for f, m in set(base_g) ^ set(cand_g)})
    for key in sorted(set(base_g) & set(cand_g)):
        base, cand = base_g[key], cand_g[key]
        main = _rate_diff(base, cand, "resolved")
        ci = (main["ci"][0], main["ci"][1])
        verdict = stats.verdict(ci, main["delta"], threshold)
        entry: dict[str, Any] = {
            "fixture": key[0],
            "model": key[1] if by_model else next(iter(cand_models)),
            "baseline_n": len(base),
            "candidate_n": len(cand),
            **main,
            "verdict": verdict,
            "criteria": {c: _rate_diff(base, cand, c) for c in CRITERIA},
            "measures": {m: _measure_diff(base, cand, m) for m in MEASURES},
            "trials_for_power": None,
        }
        if verdict == "inconclusive":
            entry["trials_for_power"] = (
                stats.trials_for_power(main["baseline_rate"], threshold) if threshold > 0 else None
            )
        fixtures.append(entry)
        flips.extend(_flips(base, cand))
    overall = _overall(fixtures, threshold)
    overall_verdict = overall["verdict"]
    if overall_verdict == "inconclusive" and fixtures and threshold > 0:
        base_rate = sum(e["baseline_rate"] for e in fixtures) / len(fixtures)
        overall["trials_for_power"] = stats.trials_for_power(base_rate, threshold)
    wins = sum(1 for e in fixtures if e["delta"] > 0)
    losses = sum(1 for e in fixtures if e["delta"] < 0)
    return {
        "baseline": baseline_label,
        "threshold": threshold,
        "fixtures": fixtures,
        "overall": overall,
        "wins": wins,
        "losses": losses,
        "ties": len(fixtures) - wins - losses,
        "flip_rate": stats.flip_rate(flips),
        "unmatched": unmatched,
    }


def _overall(fixtures: Sequence[Mapping[str, Any]], threshold: float) -> dict[str, Any]:
    """Across fixtures: paired at the fixture level (t over per-fixture deltas).

    With a single fixture there is nothing to pair across, and the overall comparison is
    that fixture's own (Newcombe) comparison rather than an always-inconclusive one.
    """
    if len(fixtures) == 1:
        only = fixtures[0]
        return {
            "delta": only["delta"],
            "ci": only["ci"],
            "verdict": only["verdict"],
            "clusters": 1,
            "se": None,
            "method": "newcombe-single-fixture",
            "trials_for_power": None,
        }
    deltas = {f"{e['fixture']}:{e['model']}": float(e["delta"]) for e in fixtures}
    diff = stats.paired_cluster_diff(deltas)
    return {
        "delta": diff.delta,
        "ci": None if diff.ci is None else [diff.ci[0], diff.ci[1]],
        "verdict": stats.verdict(diff.ci, diff.delta, threshold),
        "clusters": diff.n_cand,
        "se": diff.se,
        "method": "paired-fixture-t",
        "trials_for_power": None,
    }


def any_regressed(comparison: Mapping[str, Any] | None) -> bool:
    return bool(comparison) and comparison.get("overall", {}).get("verdict") == "regressed"  # type: ignore[union-attr]

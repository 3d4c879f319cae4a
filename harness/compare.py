"""Candidate-vs-baseline comparison with intervals, verdicts and the CI gate.

The two runs are independent samples: trial *i* of one run is never paired with trial *i*
of the other. Per fixture x model the resolved-rate difference gets Newcombe's hybrid score
interval (the one-fixture case of :mod:`harness.strata`). Overall, the fixtures are strata
of a fixed suite with equal weight: the stratified difference with its MOVER interval, which
is what the gate reads. With many fixtures a second, non-gating interval treats the fixtures
as a random sample ("would this hold on other fixtures?").

Missing evidence never passes the gate: a fixture x model that only one run scored (absent,
or every item errored) fails it, and so does a comparison with nothing in common.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import stats
from harness.aggregate import MEASURES, MIN_FIXTURES_FOR_GENERALISATION
from harness.errors import BundleError
from harness.power import trials_for_power
from harness.shapes import (
    Comparison,
    FixtureComparison,
    Gate,
    OverallComparison,
    RateDiff,
)
from harness.strata import stratified_diff
from scorers.criteria import criterion_fields

Items = Sequence[Mapping[str, Any]]
GroupKey = tuple[str, str]


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


@dataclass(frozen=True)
class _Group:
    """One fixture x model of one run: its scored items and how many errored."""

    scored: list[Mapping[str, Any]]
    errored: int


def _groups(items: Items, by_model: bool) -> dict[GroupKey, _Group]:
    scored: dict[GroupKey, list[Mapping[str, Any]]] = {}
    errored: dict[GroupKey, int] = {}
    for item in items:
        key = (str(item["fixture"]), str(item["model"]) if by_model else "*")
        scored.setdefault(key, [])
        if item.get("status") == "error":
            errored[key] = errored.get(key, 0) + 1
        else:
            scored[key].append(item)
    return {k: _Group(v, errored.get(k, 0)) for k, v in scored.items()}


def _recorded(items: Sequence[Mapping[str, Any]], field: str) -> list[bool]:
    """The values of ``field`` in items that recorded it (older reports lack newer criteria)."""
    return [i[field] for i in items if isinstance(i.get(field), bool)]


def _rate_diff(
    base: Sequence[Sequence[Mapping[str, Any]]],
    cand: Sequence[Sequence[Mapping[str, Any]]],
    field: str,
) -> dict[str, Any]:
    """Stratified difference of ``field``'s rate over matched groups (one group: Newcombe).

    An item that did not record ``field`` is left out, never counted as a failure; a group
    where one run recorded it for no item makes the difference undefined (all None).
    """
    base_vals = [_recorded(g, field) for g in base]
    cand_vals = [_recorded(g, field) for g in cand]
    if not all(base_vals) or not all(cand_vals):
        return RateDiff(None, None, None, None).to_dict()
    diff = stratified_diff(
        [(sum(v), len(v)) for v in base_vals], [(sum(v), len(v)) for v in cand_vals]
    )
    return RateDiff(
        diff.baseline_rate, diff.candidate_rate, diff.delta, [diff.ci[0], diff.ci[1]]
    ).to_dict()


def _measure_diff(
    base: Sequence[Mapping[str, Any]], cand: Sequence[Mapping[str, Any]], field: str
) -> dict[str, Any]:
    a = [float(i[field]) for i in base if isinstance(i.get(field), (int, float))]
    b = [float(i[field]) for i in cand if isinstance(i.get(field), (int, float))]
    return stats.welch_interval(a, b).to_dict()


def disagreement(base_rate: float, cand_rate: float) -> float:
    """Chance that one baseline trial and one candidate trial of a fixture disagree.

    The two runs are independent draws, so this is all a "flip rate" can honestly mean:
    ``p_b (1 - p_c) + p_c (1 - p_b)``. It measures noise plus change, not a paired test.
    """
    return base_rate * (1.0 - cand_rate) + cand_rate * (1.0 - base_rate)


def _missing(
    mine: Mapping[GroupKey, _Group], other: Mapping[GroupKey, _Group], label: str
) -> list[dict[str, str]]:
    """Groups the other run scored that this run did not, with the reason."""
    out = []
    for key in sorted(k for k, g in other.items() if g.scored):
        group = mine.get(key)
        if group is not None and group.scored:
            continue
        why = (
            f"all {group.errored} {label} items errored"
            if group is not None and group.errored
            else f"not run by the {label}"
        )
        out.append({"fixture": key[0], "model": key[1], "reason": why})
    return out


def compare(
    baseline: Items, candidate: Items, threshold: float, baseline_label: str
) -> dict[str, Any]:
    """The ``comparison`` object of a candidate report (fields documented in README)."""
    base_models = {str(i["model"]) for i in baseline}
    cand_models = {str(i["model"]) for i in candidate}
    # One model each, and different: compare the two models fixture by fixture.
    by_model = not (len(base_models) == 1 and len(cand_models) == 1 and base_models != cand_models)
    cand_label = next(iter(cand_models)) if not by_model else None
    base_g, cand_g = _groups(baseline, by_model), _groups(candidate, by_model)
    matched = sorted(k for k in base_g if base_g[k].scored and k in cand_g and cand_g[k].scored)
    fixtures = [
        _fixture_entry(key, base_g[key], cand_g[key], threshold, cand_label) for key in matched
    ]
    overall = _overall(
        [base_g[k].scored for k in matched],
        [cand_g[k].scored for k in matched],
        fixtures,
        threshold,
    )
    missing_in_candidate = _missing(cand_g, base_g, "candidate")
    missing_in_baseline = _missing(base_g, cand_g, "baseline")
    tol = stats.VERDICT_TOLERANCE
    wins = sum(1 for e in fixtures if e["delta"] > tol)
    losses = sum(1 for e in fixtures if e["delta"] < -tol)
    result: dict[str, Any] = {
        "baseline": baseline_label,
        "threshold": threshold,
        "fixtures": fixtures,
        "overall": overall,
        "wins": wins,
        "losses": losses,
        "ties": len(fixtures) - wins - losses,
        "missing_in_candidate": missing_in_candidate,
        "missing_in_baseline": missing_in_baseline,
        "error": None,
    }
    return Comparison(**result, gate=gate(result)).to_dict()


def _fixture_entry(
    key: GroupKey, base: _Group, cand: _Group, threshold: float, cand_label: str | None
) -> dict[str, Any]:
    main = _rate_diff([base.scored], [cand.scored], "resolved")
    ci = (main["ci"][0], main["ci"][1])
    verdict = stats.verdict(ci, main["delta"], threshold)
    return FixtureComparison(
        fixture=key[0],
        model=cand_label or key[1],
        baseline_n=len(base.scored),
        candidate_n=len(cand.scored),
        baseline_errors=base.errored,
        candidate_errors=cand.errored,
        **main,
        verdict=verdict,
        disagreement=disagreement(main["baseline_rate"], main["candidate_rate"]),
        criteria={c: _rate_diff([base.scored], [cand.scored], c) for c in criterion_fields()},
        measures={m: _measure_diff(base.scored, cand.scored, m) for m in MEASURES},
        trials_for_power=(
            trials_for_power([main["baseline_rate"]], threshold)
            if verdict == "inconclusive"
            else None
        ),
    ).to_dict()


def _overall(
    base: Sequence[Sequence[Mapping[str, Any]]],
    cand: Sequence[Sequence[Mapping[str, Any]]],
    fixtures: Sequence[Mapping[str, Any]],
    threshold: float,
) -> dict[str, Any]:
    """The fixed-suite comparison over matched groups (the gate), plus, with many fixtures,
    the fixtures-as-a-random-sample interval (reported, never gating)."""
    if not fixtures:
        return OverallComparison(
            strata=0,
            baseline_rate=None,
            candidate_rate=None,
            delta=None,
            ci=None,
            verdict="inconclusive",
            method="none: no fixture x model in common",
            disagreement=None,
            criteria={},
            trials_for_power=None,
            random_fixtures=None,
        ).to_dict()
    main = _rate_diff(base, cand, "resolved")
    verdict = stats.verdict((main["ci"][0], main["ci"][1]), main["delta"], threshold)
    random_fixtures = None
    if len(fixtures) >= MIN_FIXTURES_FOR_GENERALISATION:
        deltas = {f"{e['fixture']}:{e['model']}": float(e["delta"]) for e in fixtures}
        spread = stats.paired_cluster_diff(deltas)
        random_fixtures = {
            "delta": spread.delta,
            "ci": None if spread.ci is None else [spread.ci[0], spread.ci[1]],
            "se": spread.se,
            "df": spread.df,
            "method": "fixtures-as-random-sample-t",
        }
    return OverallComparison(
        strata=len(fixtures),
        **main,
        verdict=verdict,
        method="newcombe" if len(fixtures) == 1 else "stratified-newcombe",
        disagreement=sum(e["disagreement"] for e in fixtures) / len(fixtures),
        criteria={c: _rate_diff(base, cand, c) for c in criterion_fields()},
        trials_for_power=(
            trials_for_power([e["baseline_rate"] for e in fixtures], threshold)
            if verdict == "inconclusive"
            else None
        ),
        random_fixtures=random_fixtures,
    ).to_dict()


def gate(comparison: Mapping[str, Any]) -> dict[str, Any]:
    """Whether ``--fail-on regression`` passes, with one reason per failure."""
    reasons: list[str] = []
    if comparison.get("error"):
        reasons.append(f"comparison failed: {comparison['error']}")
    for side in ("candidate", "baseline"):
        for m in comparison.get(f"missing_in_{side}") or []:
            reasons.append(f"missing in the {side}: {m['fixture']}:{m['model']} ({m['reason']})")
    overall = comparison.get("overall") or {}
    if not comparison.get("error") and not comparison.get("fixtures"):
        reasons.append("no fixture x model scored by both runs")
    if overall.get("verdict") == "regressed":
        ci = overall.get("ci") or [None, None]
        reasons.append(
            f"overall verdict regressed: {format_pp(overall.get('delta'))}, "
            f"95% CI [{format_pp(ci[0])}, {format_pp(ci[1])}]"
        )
    return Gate(not reasons, reasons).to_dict()


def failed_comparison(baseline_label: str, threshold: float, error: str) -> dict[str, Any]:
    """The comparison object when comparing was impossible; it fails the gate."""
    result: dict[str, Any] = {
        "baseline": baseline_label,
        "threshold": threshold,
        "fixtures": [],
        "overall": _overall([], [], [], threshold),
        "wins": 0,
        "losses": 0,
        "ties": 0,
        "missing_in_candidate": [],
        "missing_in_baseline": [],
        "error": error,
    }
    return Comparison(**result, gate=gate(result)).to_dict()


def format_pp(value: float | None) -> str:
    """A rate difference in percentage points, signed, one decimal: ``-46.7 pp``."""
    if value is None:
        return "n/a"
    points = round(100.0 * value, 1)
    return f"{points + 0.0:+.1f} pp"  # + 0.0 turns -0.0 into 0.0


def gate_failed(comparison: Mapping[str, Any] | None) -> bool:
    """True when a comparison exists and its gate did not pass."""
    return bool(comparison) and not (comparison.get("gate") or {}).get("passed", False)  # type: ignore[union-attr]

"""The run report: ``report.json`` (schema-checked), ``report.md``, ``report.html`` and JUnit XML."""

from __future__ import annotations

import datetime as dt
import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import jsonschema

from harness import __version__
from harness.aggregate import overall, summarize
from harness.bundle import write_json_atomic
from harness.compare import compare, failed_comparison, format_pp, load_report
from harness.errors import BundleError
from harness.progress import format_duration
from harness.results import ItemResult
from scorers import criteria as rubric
from scorers.criteria import criterion_fields, criterion_labels

#: 1: issue #2 (items only). 2: summary, overall, comparison, interrupted. 3: stratified
#: overall rate and comparison, the gate, missing fixtures, disagreement (no flip rate),
#: the provenance criterion.
REPORT_SCHEMA_VERSION = 3
REPORT_SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "report.schema.json"


@dataclass(frozen=True)
class RunReport:
    run_id: str
    resolved: bool
    interrupted: bool
    items: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    overall: list[dict[str, Any]]
    comparison: dict[str, Any] | None = None
    not_started: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    #: When this session of the run started and ended (a resumed run: the resuming session).
    started_at: str = ""
    duration_s: float | None = None
    harness_version: str = __version__
    schema_version: int = REPORT_SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "run_id": self.run_id,
            "resolved": self.resolved,
            "interrupted": self.interrupted,
            "harness_version": self.harness_version,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "duration_s": self.duration_s,
            "options": self.options,
            "summary": self.summary,
            "overall": self.overall,
            "comparison": self.comparison,
            "not_started": self.not_started,
            "items": self.items,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunReport:
        return cls(
            run_id=str(data["run_id"]),
            resolved=bool(data["resolved"]),
            interrupted=bool(data.get("interrupted", False)),
            items=list(data["items"]),
            summary=list(data.get("summary") or summarize(data["items"])),
            overall=list(data.get("overall") or overall(data["items"])),
            comparison=data.get("comparison"),
            not_started=list(data.get("not_started", [])),
            options=dict(data.get("options", {})),
            created_at=str(data.get("created_at", "")),
            started_at=str(data.get("started_at") or ""),
            duration_s=data.get("duration_s"),
            harness_version=str(data.get("harness_version", "")),
            schema_version=int(data.get("schema_version", 1)),
        )


def item_order(item: Mapping[str, Any] | ItemResult) -> tuple[str, str, int]:
    """Fixture, model, then trial as a number (1, 2, 10; the key as a string sorts 10 first)."""
    if isinstance(item, ItemResult):
        return item.fixture, item.model, item.trial
    return str(item["fixture"]), str(item["model"]), int(item["trial"])


def build_report(
    *,
    run_id: str,
    results: Sequence[ItemResult],
    interrupted: bool,
    not_started: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
    baseline: Path | None = None,
    threshold: float = 0.05,
    started_at: dt.datetime | None = None,
) -> RunReport:
    now = dt.datetime.now(dt.UTC)
    items = [r.to_dict() for r in sorted(results, key=item_order)]
    comparison = None if baseline is None else safe_compare(baseline, items, threshold)
    resolved = (
        bool(items) and not interrupted and not not_started and all(i["resolved"] for i in items)
    )
    return RunReport(
        run_id=run_id,
        resolved=resolved,
        interrupted=interrupted,
        items=items,
        summary=summarize(items),
        overall=overall(items),
        comparison=comparison,
        not_started=list(not_started),
        options=dict(options or {}),
        created_at=now.isoformat(),
        started_at=started_at.isoformat() if started_at else "",
        duration_s=round((now - started_at).total_seconds(), 1) if started_at else None,
    )


def safe_compare(
    baseline: Path, items: Sequence[Mapping[str, Any]], threshold: float
) -> dict[str, Any]:
    """Compare against ``baseline``; any failure becomes a comparison that fails the gate,
    so a broken baseline never costs the run its report."""
    try:
        base = load_report(baseline)
        return compare(base["items"], items, threshold, str(baseline))
    except Exception as exc:  # the report must be written whatever went wrong
        return failed_comparison(str(baseline), threshold, f"{type(exc).__name__}: {exc}")


def report_schema() -> dict[str, Any]:
    """report.schema.json, with every registry criterion's pass flag required in items and
    its rate in summaries (so a new criterion needs no schema edit)."""
    schema = json.loads(REPORT_SCHEMA_PATH.read_text(encoding="utf-8"))
    item = schema["properties"]["items"]["items"]
    for criterion in rubric.CRITERIA:
        item["properties"].setdefault(criterion.field, {"type": "boolean"})
        if criterion.field not in item["required"]:
            item["required"].append(criterion.field)
    summary = schema["properties"]["summary"]["items"]["properties"]["criteria"]
    summary["required"] = list(criterion_fields())
    return schema


def validate_report(data: Mapping[str, Any]) -> None:
    """Raise jsonschema.ValidationError if ``data`` does not match the report schema."""
    jsonschema.validate(dict(data), report_schema())


def write_report(run_dir: Path, report: RunReport) -> None:
    data = report.to_dict()
    validate_report(data)
    write_json_atomic(run_dir / "report.json", data)
    (run_dir / "report.md").write_text(render_markdown(report, run_dir), encoding="utf-8")
    from harness.html_report import write_html  # lazily: plotly is loaded only to render

    try:
        write_html(run_dir, report)
    except Exception as exc:  # the page is a view: it must never cost the run its report
        warnings.warn(f"report.html not written: {type(exc).__name__}: {exc}", stacklevel=2)


def read_report(run_dir_or_file: Path) -> tuple[RunReport, Path]:
    data = load_report(run_dir_or_file)
    path = Path(data.pop("_path"))
    try:
        return RunReport.from_dict(data), path.parent
    except (KeyError, TypeError, ValueError) as exc:
        raise BundleError(f"{path}: not a report this harness can render ({exc})") from exc


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _ci(ci: Sequence[float] | None) -> str:
    return "n/a" if not ci else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _failed_criteria(item: Mapping[str, Any]) -> list[str]:
    return [c for c in criterion_fields() if item.get(c) is False]


def render_markdown(report: RunReport, run_dir: Path) -> str:
    items = report.items
    counts = {
        s: sum(1 for i in items if i["status"] == s) for s in ("resolved", "unresolved", "error")
    }
    lines = [
        f"# swarm-harness run {report.run_id}",
        "",
        *_header(report),
        f"- items: {len(items)} ({counts['resolved']} resolved, {counts['unresolved']} unresolved, "
        f"{counts['error']} errors){' — INTERRUPTED' if report.interrupted else ''}",
        f"- resolved overall: {'yes' if report.resolved else 'no'}",
    ]
    if report.not_started:
        lines.append(
            f"- not started: {len(report.not_started)} (`--resume {run_dir}` completes them)"
        )
    for o in report.overall:
        lines.append(
            f"- {o['model']}: {_pct(o.get('rate'))} resolved, 95% CI {_ci(o.get('ci'))} "
            f"(mean over {o.get('strata')} fixtures, n={o.get('n')})"
        )
    lines += [
        "",
        "## Per fixture",
        "",
        "| fixture | model | n | errors | resolved | rate | 95% CI | "
        + " | ".join(criterion_labels().values())
        + " | mean tokens |",
        "|---|---|---|---|---|---|---|" + "---|" * len(criterion_fields()) + "---|",
    ]
    for s in report.summary:
        crit = " | ".join(_pct(s["criteria"][c]["rate"]) for c in criterion_fields())
        tokens = s["measures"]["tokens_used"].get("mean")
        lines.append(
            f"| {s['fixture']} | {s['model']} | {s['n']} | {s['errors']} | {s['resolved']} | "
            f"{_pct(s['rate'])} | {_ci(s['ci'])} | {crit} | {'n/a' if tokens is None else f'{tokens:.0f}'} |"
        )
    if report.comparison:
        lines += comparison_markdown(report.comparison)
    lines += _pass_at_k(report.summary)
    bad = sorted((i for i in items if i["status"] != "resolved"), key=item_order)
    if bad:
        lines += ["", "## Unresolved and errored items", ""]
        timeout = report.options.get("timeout_s")
        for i in bad:
            failed = ", ".join(_failed_criteria(i)) or "-"
            lines.append(f"- `{i['key']}` ({i['status']}): {item_cause(i, timeout)}")
            if failed != "-":
                lines.append(f"  - failed criteria: {failed}")
            if i.get("agent_error"):
                lines.append(f"  - agent error: {str(i['agent_error'])[:300]}")
            lines.append(f"  - item dir: `{run_dir / 'items' / i['item_dir']}`")
    return "\n".join(lines) + "\n"


def _header(report: RunReport) -> list[str]:
    """Who ran what, when and for how long."""
    opts = report.options
    agent = str(opts.get("agent") or "?")
    kind, _, behaviour = agent.partition(":")
    models = ", ".join(opts.get("models") or []) or "?"
    when = (report.started_at or report.created_at or "?")[:19].replace("T", " ")
    took = "?" if report.duration_s is None else format_duration(float(report.duration_s))
    return [
        f"- agent: {kind if behaviour else agent}"
        + (f", behaviour: {behaviour}" if behaviour else ""),
        f"- models: {models}; trials: {opts.get('trials', '?')}; seed: {opts.get('seed', '?')}",
        f"- date: {when} UTC; duration: {took}",
    ]


def _pass_at_k(summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """pass@k per fixture x model (unbiased; the chance that at least one of k trials resolves)."""
    rows = [s for s in summary if s.get("pass_at_k")]
    if not rows or max(len(s["pass_at_k"]) for s in rows) < 2:
        return []
    ks = sorted({int(k) for s in rows for k in s["pass_at_k"]})
    lines = [
        "",
        "## pass@k",
        "",
        "| fixture | model | " + " | ".join(f"pass@{k}" for k in ks) + " |",
        "|---|---|" + "---|" * len(ks),
    ]
    for s in rows:
        cells = [_pct(s["pass_at_k"].get(str(k))) for k in ks]
        lines.append(f"| {s['fixture']} | {s['model']} | " + " | ".join(cells) + " |")
    return lines


def item_cause(item: Mapping[str, Any], timeout_s: float | None) -> str:
    """Why an item did not resolve, the cause first: an error, then a time-out, then the
    failed criteria's reasons."""
    parts: list[str] = []
    if item.get("error"):
        parts.append(str(item["error"]))
    if item.get("timed_out"):
        limit = f" after {timeout_s:g} s" if isinstance(timeout_s, (int, float)) else ""
        parts.append(f"timed out{limit}")
    parts.extend(item.get("failures") or [])
    return "; ".join(parts) + "." if parts else ""


def _ci_pp(ci: Sequence[float] | None) -> str:
    return "n/a" if not ci else f"[{format_pp(ci[0])}, {format_pp(ci[1])}]"


def comparison_markdown(cmp: Mapping[str, Any]) -> list[str]:
    o = cmp["overall"]
    gate = cmp.get("gate") or {}
    lines = ["", f"## Comparison with {cmp['baseline']}", ""]
    if cmp.get("error"):
        lines.append(f"Comparison failed: {cmp['error']}")
    lines.append(
        f"Overall ({o.get('strata', 0)} fixtures, equal weight): **{o['verdict']}**, "
        f"Δ {format_pp(o['delta'])}, 95% CI {_ci_pp(o['ci'])}, "
        f"threshold ±{100 * cmp['threshold']:.1f} pp; wins/losses/ties "
        f"{cmp['wins']}/{cmp['losses']}/{cmp['ties']}; expected disagreement "
        f"{_pct(o.get('disagreement'))}"
    )
    rf = o.get("random_fixtures")
    if rf:
        lines.append(
            f"Fixtures as a random sample (not gating): Δ {format_pp(rf['delta'])}, "
            f"95% CI {_ci_pp(rf['ci'])}"
        )
    if o.get("trials_for_power"):
        lines.append(
            f"Inconclusive: about {o['trials_for_power']} trials per fixture in each run would "
            "detect a drop of the threshold with 80% power."
        )
    lines.append(
        "Gate (`--fail-on regression`): "
        + ("passes" if gate.get("passed") else "FAILS: " + "; ".join(gate.get("reasons") or []))
    )
    for side in ("candidate", "baseline"):
        missing = cmp.get(f"missing_in_{side}") or []
        if missing:
            names = ", ".join(f"{m['fixture']}:{m['model']} ({m['reason']})" for m in missing)
            lines.append(f"Missing in the {side}: {names}")
    lines += [
        "",
        "| fixture | model | baseline | candidate | Δ | 95% CI | verdict | trials for 80% power |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for f in cmp["fixtures"]:
        lines.append(
            f"| {f['fixture']} | {f['model']} | {_pct(f['baseline_rate'])} | {_pct(f['candidate_rate'])} | "
            f"{format_pp(f['delta'])} | {_ci_pp(f['ci'])} | {f['verdict']} | {f.get('trials_for_power') or ''} |"
        )
    return lines


def render_junit(report: RunReport) -> str:
    """One test case per fixture x model; a case fails when any of its items is unresolved."""
    suite = ET.Element("testsuite", name=f"swarm-harness {report.run_id}")
    failures = errors = 0
    for s in report.summary:
        case = ET.SubElement(suite, "testcase", classname=s["fixture"], name=s["model"])
        items = [
            i for i in report.items if i["fixture"] == s["fixture"] and i["model"] == s["model"]
        ]
        bad = [i for i in items if i["status"] == "unresolved"]
        errs = [i for i in items if i["status"] == "error"]
        if bad:
            failures += 1
            node = ET.SubElement(
                case,
                "failure",
                message=f"{len(bad)}/{len(items)} unresolved; rate {_pct(s['rate'])}",
            )
            node.text = "\n".join(f"{i['key']}: {'; '.join(i.get('failures') or [])}" for i in bad)
        elif errs:
            errors += 1
            node = ET.SubElement(case, "error", message=f"{len(errs)} items could not run")
            node.text = "\n".join(f"{i['key']}: {i.get('error')}" for i in errs)
        ET.SubElement(
            case, "system-out"
        ).text = f"resolved {s['resolved']}/{s['n']}, 95% CI {_ci(s['ci'])}"
    suite.set("tests", str(len(report.summary)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"

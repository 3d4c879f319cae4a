"""The report model: the generated schema is current, every record round-trips through
JSON, and every readable report version loads through ``from_dict``."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from model_builders import make_item, make_score

from harness.errors import BundleError
from harness.model.comparison import Gate
from harness.model.item import ItemCost, ItemResult
from harness.model.report import (
    REPORT_SCHEMA_PATH,
    REPORT_SCHEMA_VERSION,
    RunReport,
    load_report,
    report_schema,
)
from harness.model.schema import report_schema_text
from harness.model.story import ItemStory
from harness.model.text import cost_text, efficiency_line, usage_line
from harness.report.show import story_text
from scorers import Efficiency, TokenUsage, UsageSummary

REPORTS = Path(__file__).resolve().parents[1] / "data" / "reports"


def test_committed_schema_is_generated_from_the_model() -> None:
    assert REPORT_SCHEMA_PATH.read_text() == report_schema_text(), (
        "report.schema.json is stale: run python -m harness.model.schema"
    )


def test_records_refuse_missing_and_unknown_fields() -> None:
    gate = Gate(False, ("x",))
    assert Gate.from_dict(json.loads(json.dumps(gate.to_dict()))) == gate
    with pytest.raises(ValueError, match="missing fields"):
        Gate.from_dict({"passed": True})
    with pytest.raises(ValueError, match="unknown fields"):
        Gate.from_dict({"passed": True, "reasons": [], "extra": 1})
    with pytest.raises(ValueError, match=r"Gate\.passed"):
        Gate.from_dict({"passed": 1, "reasons": []})


@pytest.mark.parametrize("version", [2, 3])
def test_older_reports_load_as_the_current_model_and_round_trip(version: int) -> None:
    report = load_report(REPORTS / f"v{version}.json")
    assert report.schema_version == REPORT_SCHEMA_VERSION
    assert report.notes and f"schema-{version}" in report.notes[0]
    data = report.to_dict()
    jsonschema.validate(data, report_schema())
    assert RunReport.from_dict(json.loads(json.dumps(data))) == report
    raw = json.loads((REPORTS / f"v{version}.json").read_text())
    assert [i.key for i in report.items] == [i["key"] for i in raw["items"]]
    assert [i.status for i in report.items] == [i["status"] for i in raw["items"]]
    # Every verdict the old report recorded is the same verdict now, under its one name.
    for item, old in zip(report.items, raw["items"], strict=True):
        assert item.passed("coverage") is old["coverage"]
        assert item.passed("delegation") is old["delegation_evidence"]
        assert item.passed("provenance") is old.get("provenance")  # None: never judged
        assert item.score.tokens_used == old["tokens_used"]
        assert item.facts.wall_time_s == old["wall_time_s"]


def test_version_3_keeps_its_summary_and_comparison() -> None:
    report = load_report(REPORTS / "v3.json")
    raw = json.loads((REPORTS / "v3.json").read_text())
    assert report.comparison is not None
    assert report.comparison.overall.verdict == raw["comparison"]["overall"]["verdict"]
    assert (
        report.summary[0].criteria["delegation"].count
        == (raw["summary"][0]["criteria"]["delegation_evidence"]["count"])
    )


def test_version_2_says_its_comparison_is_not_shown() -> None:
    report = load_report(REPORTS / "v2.json")
    assert report.comparison is None and report.overall == ()
    assert any("compare the runs again" in note for note in report.notes)


def test_current_reports_round_trip_exactly(tmp_path: Path) -> None:
    report = load_report(REPORTS / "v3.json")
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report.to_dict()))
    again = load_report(path)
    assert again == report
    assert again.to_dict() == report.to_dict()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param(lambda d: d.update(schema_version=99), "schema_version: 99", id="version"),
        pytest.param(lambda d: d["items"][0].pop("score"), r"items\[0\]", id="no-score"),
        pytest.param(lambda d: d["items"][0].update(status="resolved"), "status", id="status-lies"),
        pytest.param(
            lambda d: d["items"][0]["score"]["checks"][0].update(passed="yes"),
            r"checks\[0\]\.passed",
            id="ill-typed-check",
        ),
    ],
)
def test_a_bad_report_is_refused_naming_file_and_field(
    tmp_path: Path, edit: object, message: str
) -> None:
    data = load_report(REPORTS / "v3.json").to_dict()
    data["items"][0]["score"]["checks"][0]["passed"] = False
    data["items"][0]["status"] = "unresolved"
    edit(data)  # type: ignore[operator]
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    with pytest.raises(BundleError, match=message) as err:
        load_report(path)
    assert str(path) in str(err.value)


def test_a_run_directory_loads_its_report(tmp_path: Path) -> None:
    shutil.copy(REPORTS / "v3.json", tmp_path / "report.json")
    assert load_report(tmp_path).run_id == load_report(REPORTS / "v3.json").run_id


def test_version_4_loads_without_a_usage_breakdown(tmp_path: Path) -> None:
    """A v4 report: the item scores' token split is dropped (usage None: not recorded then),
    tokens_used is kept, and the report says where it came from."""
    current = load_report(REPORTS / "v3.json").to_dict()
    old = {**current, "schema_version": 4, "notes": []}
    for item in old["items"]:
        score = item["score"]
        score.update(parent_tokens=score["tokens_used"], child_tokens=0, schema_version=4)
        del score["usage"], score["efficiency"]
    (tmp_path / "report.json").write_text(json.dumps(old))
    report = load_report(tmp_path)
    assert all(i.score.usage is None and i.score.efficiency is None for i in report.items)
    assert [i.score.tokens_used for i in report.items] == [
        i["score"]["tokens_used"] for i in current["items"]
    ]
    assert report.notes[-2:] == (
        "read from a schema-4 report: no usage breakdown",
        "read from a schema-5 report: items were not priced",
    )
    assert usage_line(report.items[0].score) is None


def test_usage_and_efficiency_lines() -> None:
    score = replace(
        make_score(),
        usage=UsageSummary(
            total=TokenUsage(900, 100, 50, 10),
            parent=TokenUsage(400, 60),
            children=TokenUsage(500, 40, 50, 10),
            complete=False,
            source="test",
            gaps=("spawned children without a transcript: c1",),
            agent_reported_cost_usd=0.0123,
        ),
        efficiency=Efficiency(8, 132.5, 0.6, 9, 1.125, 4, 2.5, 10.0),
    )
    line = usage_line(score)
    assert line is not None and line.startswith("usage: 1,060 tokens (input 900, output 100")
    assert "parent 460, children 600" in line and "$" not in line  # the cost line's
    assert "LOWER BOUND: spawned children without a transcript: c1" in line
    eff = efficiency_line(score)
    assert eff == (
        "efficiency: 132 tokens per shard; children 60% of tokens; 9 spawns for 8 shards "
        "(1.12); at most 4 children at once; children's busy time 2.50x the parent's wall time"
    )


def _priced(usd: float | None, own: float | None) -> ItemResult:
    """An item of 1,060 tokens the harness priced at ``usd`` (None: no price known) and the
    agent at ``own`` (None: it reported none)."""
    usage = UsageSummary(
        total=TokenUsage(900, 100, 50, 10), complete=True, source="t", agent_reported_cost_usd=own
    )
    detail = () if usd is None else ("p/m: price file: p/m",)
    cost = ItemCost(usd, "price file" if usd else "none", detail, () if usd else ("p/m",), True)
    item = make_item("fx", 1, True)
    return replace(item, score=replace(item.score, usage=usage), cost=cost)


@pytest.mark.parametrize(
    ("usd", "own", "line"),
    [
        pytest.param(
            None,
            0.0123,
            "cost: $0.0123, the agent's own price (no price known to the harness for p/m)",
            id="only-the-agents-own",
        ),
        pytest.param(
            0.01,
            0.0123,
            "cost: $0.0100 [p/m: price file: p/m]; $0.0123, the agent's own price",
            id="both-differ",
        ),
        pytest.param(0.0123, 0.0123, "cost: $0.0123 [p/m: price file: p/m]", id="both-agree"),
        pytest.param(None, None, "cost: unknown: no price known for p/m", id="neither"),
    ],
)
def test_an_items_cost_is_one_line_with_its_source(
    usd: float | None, own: float | None, line: str
) -> None:
    """The figure known, with where it came from, in one line: never a price in the usage
    line beside "cost: unknown" in the next (``show``, the HTML drill-down)."""
    item = _priced(usd, own)
    assert cost_text(item) == line
    usage = usage_line(item.score)
    assert usage is not None and "$" not in usage
    story = ItemStory(item, Path("d"), (), (), (), ())
    text = story_text(story)
    assert [ln.strip() for ln in text.splitlines() if "$" in ln or "cost" in ln] == [line]


def test_version_6_reads_as_one_agent_everywhere() -> None:
    """Before the agent was a dimension, a run had one: every item, summary, overall rate
    and option names it; comparison cells pair the runs' only agents (agent "")."""
    raw = json.loads((REPORTS / "v6.json").read_text())
    report = load_report(REPORTS / "v6.json")
    jsonschema.validate(report.to_dict(), report_schema())
    label = raw["options"]["agent"]
    assert label == "sim"
    assert {i.agent for i in report.items} == {label}
    assert {s.agent for s in report.summary} == {label}
    assert {o.agent for o in report.overall} == {label}
    (agent,) = report.options.agents
    assert (agent.agent, agent.kind, agent.models) == (
        label,
        "sim",
        tuple(raw["options"]["models"]),
    )
    assert report.agents is None
    cmp = report.comparison
    assert cmp is not None and cmp.cost is not None
    assert [f.agent for f in cmp.fixtures] == [""] * len(raw["comparison"]["fixtures"])
    assert [r.agent for r in cmp.cost.fixtures] == [""] * len(cmp.cost.fixtures)
    assert cmp.cost.overall.agent == "*"
    # Nothing else moved: the verdicts and figures are the old report's.
    assert [i.key for i in report.items] == [i["key"] for i in raw["items"]]
    assert cmp.overall.verdict == raw["comparison"]["overall"]["verdict"]
    assert [s.rate for s in report.summary] == [s["rate"] for s in raw["summary"]]


def test_version_8_reads_as_a_comparison_of_every_cell() -> None:
    """Before --compare-shared-only: a comparison compared every cell (a fixture only the
    baseline ran failed its gate) and did not record how many cells the baseline had."""
    report = load_report(REPORTS / "v8.json")
    jsonschema.validate(report.to_dict(), report_schema())
    cmp = report.comparison
    assert report.schema_version == REPORT_SCHEMA_VERSION and cmp is not None
    assert cmp.shared_only is False and cmp.baseline_cells is None and cmp.shared_line() is None
    assert [m.fixture for m in cmp.missing_in_candidate] == ["csv-prices"]
    assert not cmp.gate.passed
    assert RunReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report


def test_version_9_reads_its_standings_costs_per_resolved_item_without_an_interval() -> None:
    """Version 9 recorded an agent's cost per resolved item as a bare number: the same
    figure, no interval, and nothing recomputed (its summaries keep Fieller's)."""
    raw = json.loads((REPORTS / "v9.json").read_text())
    report = load_report(REPORTS / "v9.json")
    jsonschema.validate(report.to_dict(), report_schema())
    assert report.schema_version == REPORT_SCHEMA_VERSION and report.agents is not None
    for s, old in zip(report.agents.standings, raw["agents"]["standings"], strict=True):
        assert s.cost_per_resolved_usd is None  # the sim's models have no price
        assert old["cost_per_resolved_usd"] is None
        tokens = s.tokens_per_resolved
        assert tokens is not None and tokens.value == old["tokens_per_resolved"]
        assert (tokens.n, tokens.resolved, tokens.ci) == (old["n"], old["resolved"], None)
        assert tokens.total == pytest.approx(tokens.value * tokens.resolved)
        assert tokens.method == "not-recorded" and "schema 9" in (tokens.reason or "")
    old_summary = raw["summary"][0]["tokens_per_resolved"]
    assert report.summary[0].tokens_per_resolved is not None
    assert report.summary[0].tokens_per_resolved.to_dict() == old_summary
    assert old_summary["method"] == "fieller-adjusted-rate"
    assert RunReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report


def test_version_9_reads_a_selftest_as_one_not_judged() -> None:
    """Before reports marked selftests: one is known by the prices it was priced with (the
    scripted server's), and its rows' verdict (kept beside the report then) is not read;
    another run is not a selftest."""
    report = load_report(REPORTS / "v9-selftest.json")
    jsonschema.validate(report.to_dict(), report_schema())
    assert report.schema_version == REPORT_SCHEMA_VERSION
    assert report.options.selftest is True and report.selftest is None
    assert [i.model for i in report.items] == ["scripted/honest", "scripted/no-spawn"]
    assert RunReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report
    v8 = load_report(REPORTS / "v8.json")
    assert v8.options.selftest is False and v8.selftest is None


def test_version_7_reads_with_one_attempt_per_item_and_no_faults_recorded() -> None:
    """Before provider faults: every item ran once and recorded no faults (not "none"), the
    run had no retries and no breaker, and no provider health."""
    report = load_report(REPORTS / "v7.json")
    jsonschema.validate(report.to_dict(), report_schema())
    assert report.schema_version == REPORT_SCHEMA_VERSION and report.provider is None
    assert len(report.items) == 4
    assert all(i.attempts == 1 and i.earlier == () for i in report.items)
    assert all(i.facts.provider_faults is None for i in report.items)
    o = report.options
    assert (o.retries, o.retry_backoff_s, o.max_provider_errors, o.agent_env) == (0, 0.0, 0, None)
    assert RunReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report

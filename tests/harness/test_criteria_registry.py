"""A sixth criterion is one registry entry: items, summaries, comparisons, schema and
report.md follow without another change."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.model.item import ItemResult, RunFacts
from harness.model.report import RunOptions, RunReport, report_schema, validate_report
from harness.report.markdown import render_markdown
from harness.stats.compare import compare
from harness.stats.summaries import summarize
from scorers import criteria
from scorers.criteria import CRITERIA, Criterion, Judgement

# The scorer tests' builders make an honest run's artifacts in memory.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scorers"))
from scorer_builders import honest_run


def _tidy_if_even(ctx: criteria.ScoringContext) -> Judgement:
    return (
        Judgement(True) if len(ctx.manifest.shards) % 2 == 0 else Judgement(False, (), "tidy: odd")
    )


@pytest.fixture
def registry_plus_one(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = Criterion("tidiness", "the index is tidy", _tidy_if_even)
    monkeypatch.setattr(criteria, "CRITERIA", (*CRITERIA, extra))


def _items(trials: int) -> list[ItemResult]:
    score = honest_run().score()
    facts = RunFacts(1.0, 0, False, None, None)
    return [
        ItemResult(f"fx:m:{t}", "fx", "m", t, f"fx__{t}", score, facts)
        for t in range(1, trials + 1)
    ]


def _options() -> RunOptions:
    return RunOptions(
        fixtures=("fx",),
        fixture_paths=(),
        agent_kind="sim",
        agent_options="",
        agent_bin=None,
        agent_version=None,
        models=("m",),
        agent="sim",
        seed=0,
        trials=3,
        concurrency=1,
        executor="local",
        provider_caps={},
        timeout_s=10.0,
        keep_workdir=False,
        baseline=None,
        threshold=0.05,
        fail_on="unresolved",
    )


def test_every_report_part_follows_the_registry(registry_plus_one: None, tmp_path: Path) -> None:
    items = _items(3)
    assert all(i.passed("tidiness") is False for i in items)
    (summary,) = summarize(items)
    assert "tidiness" in summary.criteria
    cmp = compare(items, items, 0.05, "base")
    assert "tidiness" in cmp.fixtures[0].criteria and "tidiness" in cmp.overall.criteria
    schema = report_schema()
    assert "tidiness" in schema["$defs"]["fixture_summary"]["properties"]["criteria"]["required"]
    report = RunReport("r", False, tuple(items), (summary,), (), _options(), comparison=cmp)
    validate_report(report.to_dict())
    md = render_markdown(report, tmp_path)
    assert "| tidiness |" in md

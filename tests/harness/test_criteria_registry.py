"""A sixth criterion is one registry entry: items, summaries, comparisons, schema and
report.md follow without another change."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.aggregate import summarize
from harness.compare import compare
from harness.report import RunReport, render_markdown, report_schema, validate_report
from harness.results import ItemResult, RunFacts
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
    extra = Criterion("tidiness", "tidy", "the index is tidy", _tidy_if_even)
    monkeypatch.setattr(criteria, "CRITERIA", (*CRITERIA, extra))


def _items(trials: int) -> list[dict]:
    score = honest_run().score()
    facts = RunFacts(1.0, 0, False, None, None)
    return [
        ItemResult(f"fx:m:{t}", "fx", "m", t, f"fx__{t}", score, facts).to_dict()
        for t in range(1, trials + 1)
    ]


def test_every_report_part_follows_the_registry(registry_plus_one: None, tmp_path: Path) -> None:
    items = _items(3)
    assert all("tidy" in i for i in items)  # the flag is flattened into every item
    (summary,) = summarize(items)
    assert "tidy" in summary["criteria"]
    cmp = compare(items, items, 0.05, "base")
    assert "tidy" in cmp["fixtures"][0]["criteria"] and "tidy" in cmp["overall"]["criteria"]
    schema = report_schema()
    assert "tidy" in schema["properties"]["items"]["items"]["required"]
    report = RunReport("r", False, False, items, [summary], [], cmp)
    validate_report(report.to_dict())
    md = render_markdown(report, tmp_path)
    assert "| tidiness |" in md


def test_the_schema_file_names_every_built_in_criterion() -> None:
    """The checked-in schema agrees with the registry without the runtime additions."""
    import json

    from harness.report import REPORT_SCHEMA_PATH

    raw = json.loads(REPORT_SCHEMA_PATH.read_text())
    required = set(raw["properties"]["items"]["items"]["required"])
    assert {c.field for c in CRITERIA} <= required
    assert set(_items(1)[0]) >= required

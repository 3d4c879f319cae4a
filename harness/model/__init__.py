"""The report model: typed records of a run that the statistics build and every renderer
reads. Dicts appear only at the JSON boundary (``to_dict``/``from_dict``)."""

from __future__ import annotations

from harness.model.comparison import (
    COMPARISON_SCHEMA_VERSION,
    Comparison,
    DiffAsSample,
    FixtureComparison,
    Gate,
    Missing,
    OverallComparison,
    RateDiff,
    Verdict,
)
from harness.model.item import ItemResult, ItemStatus, RunFacts
from harness.model.record import Interval, Record
from harness.model.report import (
    REPORT_SCHEMA_VERSION,
    RunOptions,
    RunReport,
    load_report,
    validate_report,
)
from harness.model.summary import (
    MEASURES,
    DiffSummary,
    FixturesAsSample,
    FixtureSummary,
    MeanSummary,
    ModelOverall,
    RateEntry,
)

__all__ = [
    "COMPARISON_SCHEMA_VERSION",
    "MEASURES",
    "REPORT_SCHEMA_VERSION",
    "Comparison",
    "DiffAsSample",
    "DiffSummary",
    "FixtureComparison",
    "FixtureSummary",
    "FixturesAsSample",
    "Gate",
    "Interval",
    "ItemResult",
    "ItemStatus",
    "MeanSummary",
    "Missing",
    "ModelOverall",
    "OverallComparison",
    "RateDiff",
    "RateEntry",
    "Record",
    "RunFacts",
    "RunOptions",
    "RunReport",
    "Verdict",
    "load_report",
    "validate_report",
]

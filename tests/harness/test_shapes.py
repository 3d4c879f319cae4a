"""The typed shapes and the report schema describe the same fields."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness import shapes
from harness.report import REPORT_SCHEMA_PATH

SCHEMA = json.loads(REPORT_SCHEMA_PATH.read_text())
PROPS = SCHEMA["properties"]


def _node(path: str) -> dict:
    node = PROPS
    for part in path.split("."):
        node = node[part]
    return node


@pytest.mark.parametrize(
    ("shape", "node"),
    [
        pytest.param(shapes.FixtureSummary, "summary.items", id="summary"),
        pytest.param(shapes.ModelOverall, "overall.items", id="overall"),
        pytest.param(
            shapes.FixtureComparison,
            "comparison.oneOf.1.properties.fixtures.items",
            id="fixture-comparison",
        ),
        pytest.param(
            shapes.OverallComparison,
            "comparison.oneOf.1.properties.overall",
            id="overall-comparison",
        ),
        pytest.param(shapes.Comparison, "comparison.oneOf.1", id="comparison"),
    ],
)
def test_schema_requires_exactly_the_shape_fields(shape: type, node: str) -> None:
    target = PROPS
    for part in node.split("."):
        target = target[int(part)] if part.isdigit() else target[part]
    fields = {f.name for f in dataclasses.fields(shape)}
    assert set(target["required"]) == fields
    assert set(target["properties"]) >= fields


def test_shapes_round_trip() -> None:
    gate = shapes.Gate(False, ["x"])
    assert shapes.Gate.from_dict(json.loads(json.dumps(gate.to_dict()))) == gate
    with pytest.raises(ValueError, match="missing fields"):
        shapes.Gate.from_dict({"passed": True})

"""Named fixture sets (sets.yaml): expansion wherever a fixture name works, and refusals
that name the file and the set."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.errors import FixtureError
from harness.fixtures.lookup import expand_fixture_names
from harness.fixtures.sets import fixture_sets, read_sets

BUNDLED = Path(__file__).resolve().parent.parent.parent / "fixtures"


def make_root(tmp_path: Path, sets: str) -> Path:
    root = tmp_path / "fx"
    root.mkdir()
    for name in ("json-events", "csv-metrics"):
        shutil.copytree(BUNDLED / name, root / name)
    (root / "sets.yaml").write_text(sets, encoding="utf-8")
    return root


def test_a_set_expands_to_its_fixtures_and_star_to_every_one(tmp_path: Path) -> None:
    root = make_root(
        tmp_path,
        'quick:\n  description: one\n  fixtures: [json-events]\nevery:\n  fixtures: "*"\n',
    )
    assert expand_fixture_names(["quick"], [root]) == [root / "json-events"]
    assert expand_fixture_names(["every"], [root]) == [root / "csv-metrics", root / "json-events"]
    # A set and one of its fixtures: each fixture once.
    assert expand_fixture_names(["quick", "json-events"], [root]) == [root / "json-events"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("quick: [json-events]\n", "fixtures list", id="not-a-mapping"),
        pytest.param("quick:\n  fixtures: []\n", "non-empty list", id="empty"),
        pytest.param("quick:\n  fixtures: [nope]\n", "no fixture named nope", id="unknown"),
        pytest.param("json-events:\n  fixtures: [csv-metrics]\n", "share a fixture", id="clash"),
        pytest.param(
            "quick:\n  fixtures: [json-events]\n  description: 3\n",
            "description",
            id="bad-description",
        ),
        pytest.param("quick: {fixtures: [a}\n", "readable YAML", id="broken-yaml"),
    ],
)
def test_a_broken_sets_file_is_refused_naming_file_and_set(
    tmp_path: Path, text: str, message: str
) -> None:
    root = make_root(tmp_path, text)
    with pytest.raises(FixtureError, match=message) as info:
        fixture_sets([root], ["json-events", "csv-metrics"])
    assert str(root / "sets.yaml") in str(info.value)


def test_the_bundled_sets_name_only_bundled_fixtures() -> None:
    names = [p.name for p in BUNDLED.iterdir() if (p / "fixture.json").is_file()]
    sets = fixture_sets([BUNDLED], names)
    assert {"smoke", "standard", "all"} <= set(sets)
    assert sets["all"].every
    smoke = expand_fixture_names(["smoke"], [BUNDLED])
    assert 2 <= len(smoke) <= 3
    standard = expand_fixture_names(["standard"], [BUNDLED])
    edit = expand_fixture_names(["edit"], [BUNDLED])
    assert len(standard) == len(names) - 1 - len(edit)  # every read fixture but the widest
    assert all(s.source == BUNDLED / "sets.yaml" for s in read_sets(BUNDLED / "sets.yaml"))

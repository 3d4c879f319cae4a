"""Every bundled fixture end to end with the simulated agent: the honest sim resolves it,
and each cheat fails the criterion it targets on every fixture (one run per behaviour over
the standard set; the widest fixture with the honest sim alone)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agents import parse_agent
from harness.fixtures.lookup import expand_fixture_names, fixture_roots
from harness.plan import RunConfig
from harness.run.execute import execute_run

pytestmark = pytest.mark.e2e

#: behaviour -> the criteria it must fail on every fixture (and nothing else may fail
#: except what is listed: the cheats are built to fail one thing each).
CHEATS = {
    "no-spawn": {"delegation", "provenance"},
    "helper-names": {"delegation", "provenance"},
    "double-spawn": {"dedup"},
    "over-budget": {"dedup"},
    "silent-drop": {"receipts", "provenance"},
    "delete-to-hide": {"receipts"},
    "wrong-answer": {"coverage"},
    "self-answer": {"provenance"},
    "hollow-children": {"provenance"},
}


def run(tmp_path: Path, behaviour: str, fixtures: tuple[str, ...]):  # type: ignore[no-untyped-def]
    config = RunConfig(
        fixtures=fixtures,
        models=(),
        agents=(parse_agent(f"sim:{behaviour}"),),
        concurrency=2,
        timeout_s=120.0,
        runs_dir=tmp_path / "runs",
    )
    return execute_run(config)


def test_the_standard_set_is_every_read_fixture_but_the_widest() -> None:
    roots = fixture_roots()
    standard = {p.name for p in expand_fixture_names(["standard"], roots)}
    edit = {p.name for p in expand_fixture_names(["edit"], roots)}
    every = {p.name for p in expand_fixture_names(["all"], roots)}
    assert len(every - standard - edit) == 1 and len(every) >= 10
    assert edit == {n for n in every if n.startswith("edit-")} and len(edit) == 4


def test_the_honest_sim_resolves_every_fixture(tmp_path: Path) -> None:
    out = run(tmp_path, "honest", ("all",))
    assert len(out.report.items) >= 10
    bad = {i.key: i.score.failures for i in out.report.items if not i.resolved}
    assert not bad and out.exit_code == 0


@pytest.mark.parametrize(("behaviour", "failing"), sorted(CHEATS.items()), ids=sorted(CHEATS))
def test_each_cheat_fails_its_criterion_on_every_fixture(
    tmp_path: Path, behaviour: str, failing: set[str]
) -> None:
    out = run(tmp_path, behaviour, ("standard",))
    for item in out.report.items:
        assert item.status == "unresolved", (item.key, item.facts.error)
        assert set(item.score.failed_criteria) == failing, (item.key, item.score.failures)

"""A selftest is not an evaluation: its report, its pages and every list of runs lead with
its own verdict (which rows held, which did not), never a resolved rate, and its prices
are the scripted server's play prices, never shown as money.

The run is the simulated agent's, marked and priced as ``selftest`` marks and prices its
own (the sim talks to no model server, so ``selftest`` itself cannot drive it); its rows
are then judged and recorded through ``selftest``'s own code."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from model_builders import make_item, make_options

from harness.agents import parse_agent
from harness.cli.main import cli
from harness.model.report import RunReport, load_report
from harness.model.selftest import SCRIPTED_PRICES, SelftestRowVerdict, SelftestVerdict
from harness.model.selftest_text import selftest_headline
from harness.plan import RunConfig
from harness.pricing import PriceTable
from harness.run.execute import execute_run
from harness.selftest import SelftestCase, SelftestOutcome, SelftestRow, record_outcome

REPO = Path(__file__).resolve().parents[2]
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")
#: The scripted server's prices (scripted_model.server.PRICES_PER_MTOK).
PLAY = {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}
#: A dollar figure as the renderers write one.
MONEY = re.compile(r"\$\d")


def _selftest_run(runs: Path) -> Path:
    """A two-script selftest of the sim whose ``no-spawn`` row does not hold (its tokens
    are not the bill), recorded as ``selftest`` records one; its run dir."""
    config = RunConfig(
        fixtures=(TINY,),
        models=("sim/honest", "sim/no-spawn"),
        agents=(parse_agent("sim"),),
        runs_dir=runs,
        prices=PriceTable.from_mapping({"honest": PLAY, "no-spawn": PLAY}, SCRIPTED_PRICES),
        selftest=True,
    )
    outcome = execute_run(config)
    expected = {
        "honest": ("resolved", ()),
        "no-spawn": ("unresolved", ("delegation", "provenance")),
    }
    rows = []
    for item in outcome.report.items:
        script = item.model.removeprefix("sim/")
        status, failing = expected[script]
        billed = item.spent_tokens + (1 if script == "no-spawn" else 0)
        case = SelftestCase(script, status, failing)  # type: ignore[arg-type]
        rows.append(
            SelftestRow(
                item.fixture,
                case,
                item.status,
                item.failed_criteria,
                item.facts.error,
                item.score.turns,
                1,
                str(outcome.run_dir / "items" / item.item_dir),
                tokens=item.spent_tokens,
                billed=billed,
                cost_usd=item.spent_usd,
                billed_usd=item.spent_usd or 0.0,
                agent=item.agent,
                key=item.key,
            )
        )
    record_outcome(SelftestOutcome(tuple(rows), outcome.run_dir, ("sim",)), outcome.report, runs)
    return outcome.run_dir


@pytest.fixture(scope="module")
def selftest_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("selftest") / "runs"
    run = _selftest_run(runs)
    # An evaluation beside it, which the lists must keep apart from the selftest.
    execute_run(RunConfig(fixtures=(TINY,), models=(), agents=(parse_agent("sim"),), runs_dir=runs))
    return run


@pytest.mark.slow
def test_the_report_records_the_selftest_and_each_rows_verdict(selftest_dir: Path) -> None:
    report = load_report(selftest_dir)
    assert report.options.selftest is True
    assert report.selftest is not None
    rows = {r.script: r for r in report.selftest.rows}
    assert rows["honest"].holds and rows["honest"].expected == rows["honest"].actual
    no_spawn = rows["no-spawn"]
    assert no_spawn.failed == ("tokens",) and not no_spawn.holds
    assert no_spawn.why[0].startswith("tokens: ") and "billed" in no_spawn.why[0]
    # The play prices priced every item: the selftest checks them against the bill.
    assert all(i.cost_usd is not None and i.cost_usd > 0 for i in report.items)


@pytest.mark.slow
def test_report_md_leads_with_the_selftests_verdict_and_no_money(selftest_dir: Path) -> None:
    text = (selftest_dir / "report.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == f"# swarm-harness selftest {selftest_dir.name}"
    assert lines[2] == "**SELFTEST FAILS: 1 of 2 rows do not hold**"
    assert "NOT RESOLVED" not in text and "resolved, 95% CI" not in text
    assert "| sim | tiny | honest | resolved | resolved | yes |" in text
    assert "| sim | tiny | no-spawn | unresolved (delegation, provenance) |" in text
    assert "NO: tokens: " in text
    assert not MONEY.search(text), text
    assert "play prices" in text


@pytest.mark.slow
def test_report_html_leads_with_the_selftests_verdict_and_no_money(selftest_dir: Path) -> None:
    page = (selftest_dir / "report.html").read_text(encoding="utf-8")
    body = page[page.index("<body>") :]
    assert body.startswith('<body><div id="banner" class="banner fail" data-selftest="true"')
    assert "SELFTEST FAILS: 1 of 2 rows do not hold" in body
    assert "NOT RESOLVED" not in body and "Cost against resolved rate" not in body
    rows = body[body.index('<table id="selftest-rows">') :]
    assert rows.index('data-holds="true"') < rows.index('data-holds="false"')
    assert not MONEY.search(body), MONEY.search(body)
    assert 'data-play="true"' in body and "<th>cost</th>" not in body
    # Each item is still told in full, its cost said to be play prices.
    assert body.count('<details class="item"') == 2
    play = 'data-field="cost">cost: play prices (the scripted server&#x27;s), not money'
    assert body.count(play) == 2


@pytest.mark.slow
def test_runs_list_keeps_the_selftest_apart_with_its_rows(selftest_dir: Path) -> None:
    runs = selftest_dir.parent
    result = CliRunner().invoke(cli, ["runs", "list", "--runs-dir", str(runs)])
    assert result.exit_code == 0, result.output
    evals, _, selftests = result.output.partition("selftests: ")
    assert selftest_dir.name not in evals and "1/1 100%" in evals
    (line,) = [ln for ln in selftests.splitlines() if ln.startswith(selftest_dir.name)]
    assert line.split()[1:5] == ["sim", "tiny", "1/2", "FAIL"]
    assert not MONEY.search(selftests) and "%" not in selftests
    data = json.loads(
        CliRunner().invoke(cli, ["runs", "list", "--json", "--runs-dir", str(runs)]).output
    )
    (mine,) = [r for r in data if r["run_id"] == selftest_dir.name]
    assert mine["cost_usd"] is None and mine["unpriced_items"] == 0
    assert mine["selftest"] == {"rows": 2, "hold": 1, "passed": False}
    assert all(r["selftest"] is None for r in data if r is not mine)


@pytest.mark.slow
def test_the_runs_index_keeps_the_selftest_apart(selftest_dir: Path) -> None:
    page = (selftest_dir.parent / "index.html").read_text(encoding="utf-8")
    runs = page[page.index("<table id=runs>") : page.index("</table>")]
    selftests = page[page.index("<table id=selftests>") :]
    assert selftest_dir.name not in runs and selftest_dir.name in selftests
    assert ">1/2<" in selftests and ">FAIL<" in selftests


def _report(**changes: object) -> RunReport:
    items = (make_item("fx", 1, True), make_item("fx", 2, False))
    report = RunReport(
        run_id="r",
        interrupted=False,
        items=items,
        summary=(),
        overall=(),
        options=make_options(selftest=True),
    )
    return dataclasses.replace(report, **changes)  # type: ignore[arg-type]


def _row(holds: bool) -> SelftestRowVerdict:
    failed = () if holds else ("verdict",)
    return SelftestRowVerdict("k", "sim", "fx", "s", "resolved", "resolved", failed, ())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "headline"),
    [
        pytest.param(
            {"selftest": SelftestVerdict((_row(True), _row(True)))},
            "SELFTEST HOLDS: all 2 rows hold",
            id="every-row-holds",
        ),
        pytest.param(
            {"selftest": SelftestVerdict((_row(True), _row(False)))},
            "SELFTEST FAILS: 1 of 2 rows do not hold",
            id="a-row-does-not-hold",
        ),
        pytest.param(
            {
                "selftest": SelftestVerdict((_row(True), _row(True))),
                "interrupted": True,
                "not_started": ("a", "b", "c"),
            },
            "SELFTEST STOPPED: 2 of 2 rows hold, 3 not run",
            id="interrupted",
        ),
        pytest.param(
            {"selftest": None},
            "SELFTEST NOT JUDGED: it stopped before its rows were checked",
            id="not-judged",
        ),
    ],
)
def test_the_headline_is_the_selftests_own_verdict(
    changes: dict[str, object], headline: str
) -> None:
    assert selftest_headline(_report(**changes)) == headline


def test_a_selftest_of_schema_9_is_listed_as_one(tmp_path: Path) -> None:
    """A selftest written before reports marked them: known by its play prices, its rows
    read from the ``selftest.json`` it kept beside its report; never a failing paid run."""
    run = tmp_path / "runs" / "20261207T121743Z-c126eb"
    run.mkdir(parents=True)
    (run / "report.json").write_text(
        (REPO / "tests" / "data" / "reports" / "v9-selftest.json").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    (run / "selftest.json").write_text('{"rows": 2, "hold": 2, "ok": true}', encoding="utf-8")
    result = CliRunner().invoke(cli, ["runs", "list", "--runs-dir", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.output
    head, line = result.output.splitlines()[-2:]
    assert head.split()[4:6] == ["hold", "verdict"]
    assert line.split()[:5] == [run.name, "claude-code", "json-events", "2/2", "ok"]
    assert result.output.startswith("selftests: ") and not MONEY.search(result.output)

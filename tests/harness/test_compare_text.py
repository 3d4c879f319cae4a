"""``compare`` on a terminal prints plain aligned text within 100 columns, long names and
all; Markdown only with --markdown (what a CI job summary or a pull-request comment
takes), the same Markdown report.md has."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_html_agents import item, run_of

from harness.cli.main import cli
from harness.files import write_json_atomic
from harness.model.comparison import BaselineRun
from harness.model.report import RunReport, load_report
from harness.report.columns import WIDTH, table
from harness.report.markdown import agents_markdown, comparison_markdown
from harness.stats.compare import compare

#: Names as long as real ones get: a dated model id, an agent with options.
FIXTURES = ("nested-json-events-large", "csv-metrics")
AGENTS = ("claude-code", "codex:v2")
MODEL = "anthropic/claude-sonnet-4-5-20250929"


def agents_run(better: bool) -> RunReport:
    """Both agents on both fixtures, five trials; ``better``: codex:v2 resolves more."""
    items = [
        item(
            fixture, agent, trial, (trial + n + better) % 3 != 0, 0.21 + 0.013 * trial, model=MODEL
        )
        for n, agent in enumerate(AGENTS)
        for fixture in FIXTURES
        for trial in range(1, 6)
    ]
    return run_of(items, AGENTS)


def saved(report: RunReport, path: Path) -> Path:
    write_json_atomic(path, report.to_dict())
    return path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["compare", *args])
    return result.exit_code, result.stdout


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    return (
        saved(agents_run(False), tmp_path / "base.json"),
        saved(agents_run(True), tmp_path / "cand.json"),
    )


def assert_plain_and_fits(text: str) -> None:
    lines = text.splitlines()
    assert not [line for line in lines if len(line) > WIDTH]
    assert not [line for line in lines if line.lstrip().startswith("|")]  # no Markdown row
    assert "**" not in text and "`" not in text and "##" not in text


def test_two_runs_print_plain_text_that_fits(runs: tuple[Path, Path]) -> None:
    code, out = invoke(str(runs[0]), str(runs[1]))
    assert code == 0
    assert_plain_and_fits(out)
    cmp = compare(agents_run(False).items, agents_run(True).items, 0.05, str(runs[0]))
    assert len(cmp.fixtures) == len(FIXTURES) * len(AGENTS)
    # The model every row shares is said once; each cell's row names its fixture (wrapped
    # at its hyphens where it is long) and agent and has its verdict on its first line.
    assert f"model: {MODEL}" in out
    rows = out.partition("\nfixture ")[2].partition("\n80% power")[0].splitlines()[1:]
    for f in cmp.fixtures:
        first = next(
            n
            for n, line in enumerate(rows)
            if f.fixture.startswith(line.split()[0]) and f" {f.agent} " in line
        )
        assert f.verdict in rows[first].split()
    assert "Cost per item (USD)" in out and "Gate (--fail-on cost)" in out


def test_one_run_of_several_agents_prints_plain_text_that_fits(tmp_path: Path) -> None:
    code, out = invoke(str(saved(agents_run(True), tmp_path / "r.json")))
    assert code == 0
    assert_plain_and_fits(out)
    assert "Agents side by side" in out and f"{AGENTS[1]} against {AGENTS[0]}" in out


def test_markdown_is_behind_a_flag_and_is_report_md_s(runs: tuple[Path, Path]) -> None:
    code, out = invoke(str(runs[0]), str(runs[1]), "--markdown")
    assert code == 0
    base = load_report(runs[0])
    run = BaselineRun(base.run_id, base.options.agent, base.options.models, base.created_at)
    cmp = compare(base.items, load_report(runs[1]).items, 0.05, str(runs[0]), run)
    assert out.strip() == "\n".join(comparison_markdown(cmp)).strip()
    code, out = invoke(str(runs[1]), "--markdown")
    report = agents_run(True)
    assert report.agents is not None
    assert code == 0 and out.strip() == "\n".join(agents_markdown(report.agents)).strip()
    code, out = invoke(str(runs[0]), str(runs[1]), "--json")
    assert code == 0 and json.loads(out)["overall"]["verdict"] == cmp.overall.verdict


def test_a_table_too_wide_wraps_its_widest_cells_at_their_joints() -> None:
    header = ("fixture", "model", "rate", "verdict")
    rows = [("nested-json-events-large", MODEL, "100.0%", "inconclusive")]
    lines = table(header, rows, width=50)
    assert max(len(line) for line in lines) <= 50 and len(lines) > 2
    starts = [lines[0].index(h) for h in header] + [50]

    def column(i: int) -> list[str]:
        return [line[starts[i] : starts[i + 1]].strip() for line in lines[1:]]

    # Each name wrapped after a hyphen or its slash, every piece there and in order.
    assert "".join(column(0)) == rows[0][0] and "".join(column(1)) == MODEL
    assert column(1)[0] == "anthropic/"
    assert column(2)[0] == "100.0%" and column(3)[0] == "inconclusive"

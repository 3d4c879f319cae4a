"""`runs list`, `show`, `report --format html` and `latest`, through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sim_runs import sim_run

from harness.cli.main import cli
from harness.runs.catalog import list_runs

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-runs")
    baseline = sim_run(root, "honest")
    sim_run(root, "wrong-answer", baseline=baseline)
    return root


def _oldest_and_latest(runs_dir: Path) -> tuple[Path, Path]:
    runs = list_runs(runs_dir)
    return runs[0].path, runs[-1].path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_runs_list(runs_dir: Path) -> None:
    code, out = invoke("runs", "list", "--runs-dir", str(runs_dir))
    assert code == 0
    lines = out.splitlines()
    # One run a line within 100 columns; --wide gives every field in full.
    assert lines[0].split() == [
        "run", "agent", "fixtures", "models", "resolved", "cost", "tokens", "status",
    ]  # fmt: skip
    assert all(len(line) <= 100 for line in lines), lines
    assert "sim:honest" in lines[1] and "2/2 100%" in lines[1] and lines[1].endswith("complete")
    assert " unpriced " in lines[1]  # the sim's models have no price
    assert "sim:wrong-answer" in lines[2] and "0/2 0%" in lines[2]
    code, out = invoke("runs", "list", "--runs-dir", str(runs_dir), "--wide")
    wide = out.splitlines()
    assert wide[0].split() == [
        "run", "date", "agent", "fixtures", "models", "trials", "resolved", "cost", "tokens",
        "status",
    ]  # fmt: skip
    assert "n/a (2 unpriced)" in wide[1]
    code, out = invoke("runs", "list", "--runs-dir", str(runs_dir), "--json")
    assert code == 0 and [r["status"] for r in json.loads(out)] == ["complete", "complete"]


def test_runs_list_empty(tmp_path: Path) -> None:
    assert invoke("runs", "list", "--runs-dir", str(tmp_path)) == (0, f"no runs under {tmp_path}\n")


def test_show_by_key_in_latest_and_by_item_dir(runs_dir: Path) -> None:
    code, out = invoke("show", "tiny:sim/wrong-answer:1", "--runs-dir", str(runs_dir))
    assert code == 0, out
    assert out.startswith("tiny:sim/wrong-answer:1: unresolved")
    assert "WRONG" in out and "receipts: reply" in out and "spawn" in out and "result.json" in out
    _, latest = _oldest_and_latest(runs_dir)
    code, out = invoke("show", str(latest / "items" / "tiny__sim_wrong-answer__2"))
    assert code == 0 and out.startswith("tiny:sim/wrong-answer:2: unresolved")


def test_show_unknown_key_is_one_line_exit_2(runs_dir: Path) -> None:
    result = CliRunner().invoke(cli, ["show", "nope:x:1", "--runs-dir", str(runs_dir)])
    assert result.exit_code == 2 and "no item 'nope:x:1'" in result.output


def test_show_of_a_key_of_another_run_names_that_run(runs_dir: Path) -> None:
    """The key is not in the run looked in (latest) but in an older one: the refusal says
    which, and the ``--run`` that shows it."""
    first, latest = _oldest_and_latest(runs_dir)
    code, out = invoke("show", "tiny:sim/honest:1", "--runs-dir", str(runs_dir))
    assert code == 2 and f"{latest}: no item 'tiny:sim/honest:1'" in out
    assert f"it is an item of run {first.name}: show tiny:sim/honest:1 --run {first}" in out
    code, out = invoke("show", "tiny:sim/honest:1", "--run", str(first))
    assert code == 0 and out.startswith("tiny:sim/honest:1: resolved")


def test_report_latest_html_and_compare_latest(runs_dir: Path, tmp_path: Path) -> None:
    code, out = invoke("report", "latest", "--runs-dir", str(runs_dir), "--format", "html")
    first, latest = _oldest_and_latest(runs_dir)
    assert code == 0 and out.strip() == str(latest / "report.html")
    target = tmp_path / "page.html"
    code, out = invoke(
        "report", "latest", "--runs-dir", str(runs_dir), "--format", "html", "--output", str(target)
    )
    assert code == 0 and target.read_text().startswith("<!DOCTYPE html>")
    code, out = invoke("compare", str(first), "latest", "--runs-dir", str(runs_dir))
    assert code == 0 and "regressed" in out


def test_latest_without_runs_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["report", "latest", "--runs-dir", str(tmp_path)])
    assert result.exit_code == 2 and "no finished run" in result.output


def test_runs_list_shortens_names_and_tokens() -> None:
    from harness.cli.runs_cmd import NAMES_CHARS, _names, _tokens

    assert _names("json-events,smoke-orders,csv-prices") == "json-events +2"
    cut = _names("a-very-long-fixture-name-indeed,b")
    assert cut.endswith("… +1") and len(cut) == NAMES_CHARS
    assert [_tokens(t) for t in ("9,999", "426,004", "12,345,678")] == ["9,999", "426k", "12.3M"]


def test_show_of_an_errored_item_quotes_what_the_agent_said(tmp_path: Path) -> None:
    """The sim refuses an edit-only behaviour on a read fixture: exit 1 with its reason, which
    ``show`` quotes beside the item's error (not only report.md)."""
    run = sim_run(tmp_path, "clobber", trials=1)
    code, out = invoke("show", str(run / "items" / "tiny__sim_clobber__1"))
    assert code == 0 and out.startswith("tiny:sim/clobber:1: error"), out
    assert "agent error: " in out and "needs an edit fixture" in out, out

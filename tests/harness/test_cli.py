"""The CLI through click's CliRunner and a real subprocess: exit codes and output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from harness.model.report import REPORT_SCHEMA_VERSION, validate_report

REPO = Path(__file__).resolve().parent.parent.parent
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")


def harness(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd or REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_run_json_prints_exactly_the_report(tmp_path: Path) -> None:
    proc = harness(
        "run", "--fixture", TINY, "--agent", "sim", "--runs-dir", str(tmp_path), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)  # stdout holds nothing else
    validate_report(report)
    run_dir = next(p for p in tmp_path.iterdir() if p.is_dir())
    assert report == json.loads((run_dir / "report.json").read_text())
    assert report["resolved"] is True and report["schema_version"] == REPORT_SCHEMA_VERSION == 13
    assert "resolved" in proc.stderr  # progress went to stderr


@pytest.mark.slow
def test_run_unresolved_exits_1_with_human_summary(tmp_path: Path) -> None:
    proc = harness(
        "run", "--fixture", TINY, "--agent", "sim:wrong-answer", "--runs-dir", str(tmp_path)
    )
    assert proc.returncode == 1
    assert "unresolved" in proc.stdout and "coverage" in proc.stdout
    assert (next(p for p in tmp_path.iterdir() if p.is_dir()) / "report.md").is_file()


@pytest.mark.slow
def test_missing_agent_binary_exits_3(tmp_path: Path) -> None:
    proc = harness(
        "run",
        "--fixture",
        TINY,
        "--model",
        "a/b",
        "--agent-bin",
        str(tmp_path / "nope"),
        "--runs-dir",
        str(tmp_path),
    )
    assert proc.returncode == 3 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()  # refused before a run dir exists
    assert "not found" in line and "--agent-bin" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            ["run", "--fixture", "no-such-fixture", "--agent", "sim"], id="unknown-fixture"
        ),
        pytest.param(["run", "--fixture", TINY], id="real-agent-without-model"),
        pytest.param(["run", "--fixture", TINY, "--agent", "bogus"], id="bad-agent"),
        pytest.param(
            ["run", "--fixture", TINY, "--agent", "sim", "--trials", "0"], id="zero-trials"
        ),
        pytest.param(
            ["run", "--fixture", TINY, "--agent", "sim", "--provider-cap", "x"], id="bad-cap"
        ),
        pytest.param(["run", "--bogus-flag"], id="unknown-option"),
        pytest.param(["score", "/nonexistent"], id="score-missing-dir"),
    ],
)
def test_bad_usage_exits_2_and_runs_nothing(tmp_path: Path, args: list[str]) -> None:
    runner = CliRunner()
    result = runner.invoke(
        cli,
        [
            *args,
            *(
                ["--runs-dir", str(tmp_path)]
                if args[0] == "run" and "--bogus-flag" not in args
                else []
            ),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_score_after_moving_the_item_dir(tmp_path: Path) -> None:
    proc = harness(
        "run",
        "--fixture",
        TINY,
        "--agent",
        "sim:delete-to-hide",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--json",
    )
    report = json.loads(proc.stdout)
    (item,) = report["items"]
    src = tmp_path / "runs" / report["run_id"] / "items" / item["item_dir"]
    moved = tmp_path / "elsewhere" / "copy"
    shutil.copytree(src, moved)
    shutil.rmtree(tmp_path / "runs")
    again = CliRunner().invoke(cli, ["score", str(moved)])
    assert again.exit_code == 0, again.output
    rescored = json.loads(again.output)
    assert rescored.pop("item_dir") == "copy"
    assert rescored == {k: v for k, v in item.items() if k != "item_dir"}


def test_fixtures_validate_reports_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(TINY, bad)
    manifest = json.loads((bad / "fixture.json").read_text())
    manifest["shards"][1]["worker"] = "someone-else"
    (bad / "fixture.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(cli, ["fixtures", "validate", str(bad)])
    assert result.exit_code == 2
    assert "fixture.json" in result.output and "shards[1].worker" in result.output
    ok = CliRunner().invoke(cli, ["fixtures", "validate", TINY])
    assert ok.exit_code == 0


def test_fixtures_list_names_both_fixtures() -> None:
    result = CliRunner().invoke(cli, ["fixtures", "list"])
    assert result.exit_code == 0
    assert "json-events" in result.output and "csv-metrics" in result.output


def test_help_documents_exit_codes() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for code in ("0", "1", "2", "3", "130"):
        assert f"  {code} " in result.output


@pytest.mark.slow
def test_harness_yaml_defaults_and_bad_key(tmp_path: Path) -> None:
    (tmp_path / "harness.yaml").write_text(
        f"run:\n  fixture: [{TINY}]\n  agent: sim\n  trials: 2\n"
    )
    proc = harness(
        "run",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--json",
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["items"]) == 2
    (tmp_path / "harness.yaml").write_text("run:\n  trails: 2\n")
    bad = harness("run", "--agent", "sim", cwd=tmp_path, env={"PYTHONPATH": str(REPO)})
    assert bad.returncode == 2
    assert "harness.yaml" in bad.stderr and "trails" in bad.stderr


def _sim_run_dir(tmp_path: Path, name: str, behaviour: str, trials: int = 4) -> Path:
    proc = harness(
        "run",
        "--fixture",
        TINY,
        "--agent",
        f"sim:{behaviour}",
        "--trials",
        str(trials),
        "--concurrency",
        "4",
        "--runs-dir",
        str(tmp_path / name),
        "--json",
    )
    return tmp_path / name / json.loads(proc.stdout)["run_id"]


@pytest.mark.slow
def test_report_renders_md_json_and_junit(tmp_path: Path) -> None:
    run_dir = _sim_run_dir(tmp_path, "r", "wrong-answer", trials=2)
    md = CliRunner().invoke(cli, ["report", str(run_dir)])
    assert (
        md.exit_code == 0
        and "## Per fixture" in md.output
        and "tiny:sim/wrong-answer:1" in md.output
    )
    js = CliRunner().invoke(cli, ["report", str(run_dir / "report.json"), "--format", "json"])
    assert json.loads(js.output)["run_id"] == run_dir.name
    junit = CliRunner().invoke(cli, ["report", str(run_dir), "--format", "junit"])
    assert junit.exit_code == 0 and "<testcase" in junit.output and "<failure" in junit.output
    bad = CliRunner().invoke(cli, ["report", str(tmp_path)])
    assert bad.exit_code == 2 and "report.json" in bad.output


@pytest.mark.slow
def test_compare_verdicts_and_fail_on_regression(tmp_path: Path) -> None:
    good = _sim_run_dir(tmp_path, "good", "honest", trials=6)
    bad = _sim_run_dir(tmp_path, "bad", "wrong-answer", trials=6)
    worse = CliRunner().invoke(
        cli, ["compare", str(good), str(bad), "--json", "--fail-on", "regression"]
    )
    assert worse.exit_code == 1
    assert "gate fails: overall verdict regressed" in worse.stderr
    cmp = json.loads(worse.stdout)
    assert cmp["fixtures"][0]["verdict"] == "regressed" and cmp["fixtures"][0]["delta"] == -1.0
    assert cmp["overall"]["verdict"] == "regressed"  # one fixture: its own comparison
    better = CliRunner().invoke(cli, ["compare", str(bad), str(good), "--json"])
    assert (
        better.exit_code == 0 and json.loads(better.output)["fixtures"][0]["verdict"] == "improved"
    )


def test_fixture_all_refuses_a_broken_fixture(tmp_path: Path) -> None:
    from harness.agents import parse_agent
    from harness.plan import RunConfig, load_fixtures

    root = tmp_path / "fixtures"
    shutil.copytree(TINY, root / "good")
    shutil.copytree(TINY, root / "broken")
    (root / "broken" / "shards" / "shard-b.txt").unlink()
    config = RunConfig(
        fixtures=("all",), models=(), agents=(parse_agent("sim"),), fixtures_roots=(root,)
    )
    from harness.errors import FixtureError

    with pytest.raises(FixtureError, match=r"shard-b\.txt"):
        load_fixtures(config)
    (root / "broken" / "shards" / "shard-b.txt").write_text("x\n")
    manifest = json.loads((root / "broken" / "fixture.json").read_text())
    manifest["name"] = "mended"
    (root / "broken" / "fixture.json").write_text(json.dumps(manifest))
    assert sorted(fx.manifest.name for fx in load_fixtures(config)) == ["mended", "tiny"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["run", "--trials", "0"], "Invalid value for '--trials'"),
        (["compare", "/no/such/baseline"], "does not exist"),
        (["run", "--compare-baseline", "/no/such/run"], "does not exist"),
        (["nope"], "No such command 'nope'"),
        (["--bogus"], "No such option '--bogus'"),
        (["show"], "Missing argument"),
        (["runs", "list", "--bogus"], "No such option"),
    ],
)
def test_every_usage_error_is_one_line_with_exit_2(args: list[str], words: str) -> None:
    """One error style: click's own usage errors read like every other refusal (one
    ``error:`` line naming where the help is), not a three-line Usage/Try/Error block."""
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and words in line and "--help)" in line
    assert "Usage:" not in result.stderr and result.stdout == ""


def test_help_still_works() -> None:
    result = CliRunner().invoke(cli, ["run", "--help"])
    assert result.exit_code == 0 and result.stdout.startswith("Usage:")

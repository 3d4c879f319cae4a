"""The runs index (runs/index.html) and ``runs prune``, on real sim runs; the index in
headless Chromium (marker ``browser``)."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pytest
from browser import Browser, chromium_binary
from click.testing import CliRunner

from harness.agents import parse_agent
from harness.cli.main import cli
from harness.files import write_json_atomic
from harness.plan import RunConfig
from harness.run.execute import execute_run
from harness.runs.catalog import list_runs, owner_record
from harness.runs.lock import hold_run_dir
from harness.runs.prune import parse_age, plan_prune, remove_runs

TINY = str(Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny")
REPO = Path(__file__).resolve().parent.parent.parent
SCREENSHOT = REPO / "test-output" / "runs-index.png"
MODELS = ("sim/honest", "sim/flaky=0.5")

pytestmark = pytest.mark.e2e


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four runs of two sim models on the tiny fixture (the flaky one varies by seed), the
    last compared with the first."""
    runs = tmp_path_factory.mktemp("history") / "runs"
    first = None
    for seed in range(4):
        config = RunConfig(
            fixtures=(TINY,),
            models=MODELS,
            agents=(parse_agent("sim", seed=seed),),
            trials=3,
            concurrency=2,
            runs_dir=runs,
            baseline=first if seed == 3 else None,
        )
        run_dir = execute_run(config).run_dir
        first = first or run_dir
    return runs


@pytest.fixture
def copy(history: Path, tmp_path: Path) -> Path:
    """A copy of the history a test may delete from."""
    target = tmp_path / "runs"
    shutil.copytree(history, target)
    return target


def test_every_run_rewrites_the_index_with_a_point_per_run(history: Path) -> None:
    page = (history / "index.html").read_text(encoding="utf-8")
    runs = list_runs(history)
    assert len(runs) == 4
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", page)  # offline
    for run in runs:
        assert f'<a href="{run.run_id}/report.html">{run.run_id}</a>' in page
    # One chart for the one fixture, a line per model, a point per run and model.
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg"') == 1
    assert page.count('class="mark point"') == 4 * len(MODELS)
    hrefs = re.findall(r'<a href="([^"]+)"', page)
    assert hrefs and all((history / h).is_file() for h in hrefs)
    assert "inconclusive" in page or "regressed" in page or "improved" in page


def test_runs_list_html_rewrites_it(copy: Path) -> None:
    (copy / "index.html").unlink()
    code, out, err = invoke("runs", "list", "--html", "--runs-dir", str(copy))
    assert code == 0, err
    assert f"index: {copy / 'index.html'}" in out
    assert (copy / "index.html").read_text(encoding="utf-8").count('class="mark point"') == 8
    code, _, err = invoke("runs", "list", "--html", "--runs-dir", str(copy / "nowhere"))
    assert code == 2 and "no such directory" in err


def test_prune_is_a_dry_run_until_yes(copy: Path) -> None:
    before = sorted(p.name for p in copy.iterdir())
    code, out, err = invoke("runs", "prune", "--keep", "1", "--runs-dir", str(copy))
    assert code == 0, err
    assert sorted(p.name for p in copy.iterdir()) == before
    runs = list_runs(copy)
    # The newest is kept, and so is the first: it is the newest's baseline.
    assert f"keeping {runs[0].run_id}: the baseline of kept run {runs[3].run_id}" in out
    assert out.count("would remove") == 2 and "add --yes" in out

    code, out, err = invoke("runs", "prune", "--keep", "1", "--yes", "--runs-dir", str(copy))
    assert code == 0, err
    assert "removed 2 runs" in out
    left = [r.run_id for r in list_runs(copy)]
    assert left == [runs[0].run_id, runs[3].run_id]
    assert (copy / "index.html").read_text(encoding="utf-8").count('class="mark point"') == 4


def test_prune_needs_a_rule_and_a_readable_age(copy: Path) -> None:
    code, _, err = invoke("runs", "prune", "--runs-dir", str(copy))
    assert code == 2 and "give --keep N, --older-than AGE or both" in err
    code, _, err = invoke("runs", "prune", "--older-than", "3 fortnights", "--runs-dir", str(copy))
    assert code == 2 and "expected a number and a unit" in err
    assert parse_age("30d") == dt.timedelta(days=30) and parse_age("12h").total_seconds() == 43200


def test_older_than_and_keep_both_apply(copy: Path) -> None:
    runs = list_runs(copy)
    second, third = (dt.datetime.fromisoformat(r.created_at) for r in runs[1:3])
    now = second + (third - second) / 2 + dt.timedelta(days=30)  # the runs are < 1 s apart
    # Only runs started more than 30 days before `now`: the first two (the first is
    # needed as a baseline, so only the second goes).
    plan = plan_prune(copy, None, dt.timedelta(days=30), now=now)
    assert [r.run_id for r in plan.remove] == [runs[1].run_id]
    assert [k.run.run_id for k in plan.kept] == [runs[0].run_id]
    # With --keep 3 as well, the second is among the newest three: nothing goes.
    assert plan_prune(copy, 3, dt.timedelta(days=30), now=now).remove == ()


def test_a_running_or_locked_run_is_never_removed(copy: Path) -> None:
    runs = list_runs(copy)
    live = copy / "20990101T000000Z-live00"
    live.mkdir()
    write_json_atomic(
        live / "run.json",
        {"run_id": live.name, "created_at": "2000-01-01T00:00:00+00:00", "options": {},
         "owner": owner_record()},
    )  # fmt: skip
    plan = plan_prune(copy, 0, None)
    assert ("20990101T000000Z-live00", "running") in [(k.run.run_id, k.why) for k in plan.kept]
    victim = next(r for r in plan.remove if r.run_id == runs[2].run_id)
    with hold_run_dir(victim.path):  # a resume started after the plan was made
        removed, failed = remove_runs([victim])
    assert removed == [] and failed[0].why == "in use by a live process"
    assert victim.path.is_dir()


def test_a_symlinked_run_is_not_followed(copy: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    run = list_runs(copy)[1].path
    shutil.move(run, elsewhere)
    (copy / run.name).symlink_to(elsewhere)
    plan = plan_prune(copy, 0, None)
    assert (run.name, "not a directory of this runs dir") in [
        (k.run.run_id, k.why) for k in plan.kept
    ]
    remove_runs(plan.remove)
    assert (elsewhere / "report.json").is_file()


@pytest.mark.browser
def test_index_in_headless_chromium(history: Path, tmp_path: Path) -> None:
    binary = chromium_binary()
    if binary is None:
        pytest.skip("chromium not installed (apt-get install -y chromium; .ci/run installs it)")
    browser = Browser.start(binary)
    try:
        browser.open((history / "index.html").as_uri(), "document.readyState === 'complete'")
        marks = browser.evaluate("document.querySelectorAll('svg.chart .mark').length")
        rows = browser.evaluate("document.querySelectorAll('#runs tbody tr').length")
        box = browser.evaluate(
            "(() => { const r = document.querySelector('svg.chart').getBoundingClientRect();"
            " return [r.width, r.height]; })()"
        )
        link = browser.evaluate(
            "new URL(document.querySelector('svg.chart .mark').closest('a')"
            ".getAttribute('href'), location.href).href"
        )
        shot = browser.screenshot(tmp_path / "runs-index.png")
    finally:
        browser.close()
    SCREENSHOT.parent.mkdir(exist_ok=True)
    shutil.copyfile(tmp_path / "runs-index.png", SCREENSHOT)
    assert browser.errors == []
    assert marks == 8 and rows == 4
    assert box[0] > 300 and box[1] > 200
    assert link.startswith("file://") and link.endswith("/report.html")
    assert Path(link.removeprefix("file://")).is_file()
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000

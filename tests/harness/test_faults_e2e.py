"""Provider faults end to end with the simulated agent: retries, the rates, the breaker, the
budget, resume, and what the console and reports say. Real processes, real CLI runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import EXIT_INFRA, EXIT_RESOLVED
from harness.model.report import load_report, validate_report

REPO = Path(__file__).resolve().parents[2]
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")

pytestmark = pytest.mark.e2e


def harness(tmp_path: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run(tmp_path: Path, agent: str, *args: str) -> subprocess.CompletedProcess[str]:
    return harness(
        tmp_path,
        "run",
        "--fixture",
        TINY,
        "--agent",
        agent,
        "--retry-backoff",
        "0",
        "--runs-dir",
        str(tmp_path / "runs"),
        *args,
    )


def run_dir_of(tmp_path: Path) -> Path:
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    return run_dir


def report_of(tmp_path: Path) -> dict:
    data = json.loads((run_dir_of(tmp_path) / "report.json").read_text())
    validate_report(data)
    return data


def test_throttled_items_are_retried_until_they_resolve(tmp_path: Path) -> None:
    """``sim:throttled=0.5 --retries 4``: every item resolves, some after more than one
    attempt; the earlier attempts are kept under their items and counted by the budget."""
    done = run(
        tmp_path,
        "sim:throttled=0.5",
        "--trials",
        "8",
        "--retries",
        "6",
        "--concurrency",
        "4",
        "--max-tokens",
        "10000000",
        # Half the attempts fail: three in a row would trip the breaker (it counts attempts).
        "--max-provider-errors",
        "0",
    )
    assert done.returncode == EXIT_RESOLVED, done.stderr
    data = report_of(tmp_path)
    items = data["items"]
    assert {i["status"] for i in items} == {"resolved"}
    retried = [i for i in items if i["attempts"] > 1]
    assert retried, "with P = 0.5 over 8 items some must have been retried (seed 0)"
    run_dir = run_dir_of(tmp_path)
    for item in retried:
        assert len(item["earlier"]) == item["attempts"] - 1
        for attempt in item["earlier"]:
            assert attempt["error"].startswith("provider: 529 overloaded")
            assert (run_dir / "items" / item["item_dir"] / attempt["dir"] / "result.json").is_file()
    health = data["provider"]
    assert health["items_retried"] == len(retried) and health["items_lost"] == 0
    assert health["retries"] == sum(i["attempts"] - 1 for i in items)
    every_attempt = sum(i["score"]["tokens_used"] for i in items) + sum(
        a["tokens"] for i in items for a in i["earlier"]
    )
    assert data["budget"]["spent_tokens"] == every_attempt
    assert f"provider: {health['failed_requests']} failed requests" in done.stdout
    assert "(attempt " in done.stderr


def test_without_retries_provider_errors_stay_out_of_the_rates(tmp_path: Path) -> None:
    done = run(
        tmp_path,
        "sim:throttled=0.5",
        "--trials",
        "8",
        "--retries",
        "0",
        "--max-provider-errors",
        "0",
    )
    data = report_of(tmp_path)
    lost = [i for i in data["items"] if i["status"] == "error"]
    kept = [i for i in data["items"] if i["status"] != "error"]
    assert lost and kept, "seed 0 loses some of 8 items at P = 0.5 and keeps others"
    assert all(i["facts"]["error"].startswith("provider: ") for i in lost)
    (summary,) = data["summary"]
    assert (summary["n"], summary["errors"], summary["resolved"]) == (
        len(kept),
        len(lost),
        len(kept),
    )
    assert summary["rate"] == 1.0  # the provider's failures are not the agent's
    assert done.returncode == EXIT_RESOLVED or "error" in done.stdout
    assert f"provider: {len(lost)} ×" not in done.stdout
    assert "how items failed: provider: 529 overloaded in the parent" in done.stdout


def test_a_provider_outage_stops_the_run_with_exit_3_and_says_how_to_resume(tmp_path: Path) -> None:
    done = run(
        tmp_path,
        "sim:provider-down",
        "--trials",
        "10",
        "--retries",
        "1",
        "--max-provider-errors",
        "3",
        "--concurrency",
        "1",
    )
    assert done.returncode == EXIT_INFRA, done.stderr
    data = report_of(tmp_path)
    reason = data["provider"]["stopped"]
    # 3 attempts, or more with the items' retries among them ("5 attempts (of 3 items)").
    assert re.fullmatch(
        r"provider unreachable: (3 attempts|\d attempts \(of 3 items\)) in a row failed "
        r"with 529 overloaded",
        reason,
    ), reason
    assert data["not_started"] and not data["interrupted"]
    assert {i["status"] for i in data["items"]} == {"error"}
    # Attempts of three items in a row trip it, the items' retries in the row: at most one
    # more item launched while the third one's attempt was collected.
    assert len(data["items"]) <= 4
    run_dir = run_dir_of(tmp_path)
    left = len(data["not_started"])
    line = (
        f"{reason}; "
        f"{left} item{'' if left == 1 else 's'} not started; resume with --resume {run_dir}"
    )
    assert line in done.stderr.splitlines()
    assert "stopped early: provider unreachable" in done.stdout
    html = (run_dir / "report.html").read_text()
    assert 'id="provider" data-healthy="false"' in html
    assert f"STOPPED ({reason})" in html
    md = (run_dir / "report.md").read_text()
    assert "provider: " in md and "lost to the provider" in md
    # The resume goes on where it stopped (the provider is still down: it stops again).
    first = {i["key"]: i["attempts"] for i in data["items"]}
    again = harness(tmp_path, "run", "--resume", str(run_dir), "--retry-backoff", "0")
    assert again.returncode == EXIT_INFRA
    resumed = {i.key: i.attempts for i in load_report(run_dir).items}
    # The earlier attempts are counted on, never started again at 1: the first items the
    # resume runs again are the first run's. (Which of them get how many more attempts
    # before the breaker trips again depends on whether a retry or the next item takes
    # the freed slot first; asserting a total of 3 on one item raced that.)
    # (An item the breaker stopped before it ran again is listed as not started.)
    both = first.keys() & resumed.keys()
    assert all(resumed[key] >= first[key] for key in both)
    assert any(resumed[key] > first[key] for key in both)


def test_a_dead_endpoint_with_retries_on_stops_new_items_and_pending_retries(
    tmp_path: Path,
) -> None:
    """Every first attempt fails in a fraction of a second and frees its slot for its
    backoff: counting only items that used up their retries, the breaker let all ten items
    start (72 failed requests, 92 s). Attempts in a row trip it: the items started are the
    row plus at most one launched while the last of it was collected, and no retry waiting
    out its 60 s backoff runs."""
    done = harness(
        tmp_path, "run", "--fixture", TINY, "--agent", "sim:provider-down", "--trials", "10",
        "--concurrency", "1", "--max-provider-errors", "3", "--retry-backoff", "60",
        "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert done.returncode == EXIT_INFRA, done.stderr
    data = report_of(tmp_path)
    assert len(data["items"]) <= 4 and len(data["not_started"]) >= 6, data["not_started"]
    assert all(i["attempts"] == 1 for i in data["items"])
    assert data["provider"]["stopped"].startswith("provider unreachable: 3 attempts in a row")


def test_an_agent_that_recovers_resolves_and_shows_its_faults(tmp_path: Path) -> None:
    done = run(tmp_path, "sim:recovers", "--trials", "2")
    assert done.returncode == EXIT_RESOLVED, done.stderr
    data = report_of(tmp_path)
    for item in data["items"]:
        faults = item["facts"]["provider_faults"]
        assert item["attempts"] == 1 and faults["failed_requests"] == 4  # parent + 3 children
        assert faults["by_kind"] == {"overloaded": 4} and faults["gave_up"] is None
    shown = harness(tmp_path, "show", "--runs-dir", str(tmp_path / "runs"), data["items"][0]["key"])
    assert (
        "provider faults: 4 failed requests (overloaded 4), the agent got past them" in shown.stdout
    )


def test_agent_env_is_refused_for_an_agent_that_takes_none(tmp_path: Path) -> None:
    done = run(tmp_path, "sim", "--agent-env", "CLAUDE_CODE_MAX_RETRIES=2")
    assert done.returncode == 2
    assert (
        "--agent-env CLAUDE_CODE_MAX_RETRIES: no agent of this run takes it (sim: none)"
        in done.stderr
    )
    assert not (tmp_path / "runs").exists()


def test_sequential_trials_count_a_retried_item_once(tmp_path: Path) -> None:
    done = run(
        tmp_path,
        "sim:throttled=0.4",
        "--trials",
        "auto",
        "--max-trials",
        "6",
        "--precision",
        "0.5",
        "--retries",
        "5",
        "--max-provider-errors",
        "0",
    )
    assert done.returncode == EXIT_RESOLVED, done.stderr
    data = report_of(tmp_path)
    (summary,) = data["summary"]
    assert summary["n"] == len(data["items"])  # one outcome per item, however many attempts

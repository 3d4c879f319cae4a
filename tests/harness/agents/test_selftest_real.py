"""Every real agent under the harness, driven by the scripted model (``selftest``).

One selftest run per agent (every script on the tiny fixture, concurrency 3, through the
normal run path: adapter, launch, collection, scoring) pins: every scripted verdict, that
nothing is created under the caller's HOME or TMPDIR, that nothing of the run is left
running, and that ``score ITEM_DIR`` re-scores each bundle to the same verdict.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from realkit import REPO, selftest_in_fresh_home, tree

from harness.agents import parse_agent
from harness.model.item import ItemResult
from harness.model.report import load_report
from harness.selftest import cases_for

pytestmark = pytest.mark.real_agent

#: A selftest takes 10 s (Claude Code) to 3 minutes (prime-agent) here; the margin covers a
#: loaded 2-core machine.
SELFTEST_TIMEOUT_S = 300
#: agent -> the session fixture that finds (or installs) its binary, or skips.
BINARIES = {
    "prime-agent": "prime_agent_bin",
    # Its resident drive: the same scripts, each judged as that drive must be (Script.under).
    "prime-agent:resident": "prime_agent_bin",
    "claude-code": "claude_code_bin",
    "opencode": "opencode_bin",
    "codex": "codex_bin",
    # Codex's second multi-agent protocol: the same scripts through other tools and records.
    "codex:v2": "codex_bin",
    "gemini": "gemini_bin",
}


@pytest.fixture(scope="session")
def selftests() -> dict[str, dict]:
    """The session's selftest of each agent, by agent: made once however the tests using it
    are ordered or torn down between (xdist hands a worker its tests in batches)."""
    return {}


@pytest.fixture(params=sorted(BINARIES))
def selftest_run(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    selftests: dict[str, dict],
) -> dict:
    """One selftest per agent, over the 3-shard fixture: the smallest that every script
    exercises (a spawn per shard, a fan-out below every agent's limit on live children).
    A second fixture would run the same scripts against the same code again."""
    agent = request.param
    if agent not in selftests:
        binary = request.getfixturevalue(BINARIES[agent])
        base = tmp_path_factory.mktemp(f"selftest-{agent.replace(':', '-')}")
        run = selftest_in_fresh_home(base, agent, binary, SELFTEST_TIMEOUT_S)
        selftests[agent] = {**run, "agent": agent}
    return selftests[agent]


def test_every_script_gets_its_expected_verdict(selftest_run: dict) -> None:
    done = selftest_run["done"]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    # A row per script but the edit-only ones (a read fixture's), whether it holds first (a
    # wrapped verdict continues below it).
    scripts = [c.script for c in cases_for(parse_agent(selftest_run["agent"], "unused"))]
    rows = [r for r in map(str.split, done.stdout.splitlines()) if r[:1] in (["ok"], ["FAIL"])]
    assert sorted(r[1] for r in rows) == sorted(scripts), done.stdout
    assert all(r[0] == "ok" for r in rows), done.stdout
    # The header names the agent and what its binary said to --version.
    header = done.stdout.splitlines()[0]
    label = selftest_run["agent"]
    assert header.startswith(f"selftest of {label} (") and "simulated" not in header, header
    assert any(ch.isdigit() for ch in header), header
    # Its verdict is kept in its report, which leads with it, and the runs index lists it
    # apart, as passing.
    (run,) = [d for d in selftest_run["runs"].iterdir() if d.is_dir()]
    report = load_report(run)
    assert report.options.selftest and report.selftest is not None
    assert len(report.selftest.rows) == len(rows) == report.selftest.holding
    assert (run / "report.md").read_text(encoding="utf-8").splitlines()[2] == (
        f"**SELFTEST HOLDS: all {len(rows)} rows hold**"
    )
    index = (selftest_run["runs"] / "index.html").read_text(encoding="utf-8")
    selftests = index[index.index("<table id=selftests>") :]
    assert run.name in selftests and ">ok<" in selftests
    assert run.name not in index[index.index("<table id=runs>") : index.index("</table>")]


def test_nothing_is_created_under_home_or_tmpdir(selftest_run: dict) -> None:
    # prime-agent: ~/.ipython, ~/.prime/supervisor-owners, $TMPDIR/prime-agent-0, ...
    assert tree(selftest_run["home"]) == []
    assert tree(selftest_run["tmp"]) == []


def test_nothing_of_the_run_is_left_running(selftest_run: dict) -> None:
    assert selftest_run["leftovers"] == []


def test_items_rescore_to_the_same_verdict(selftest_run: dict) -> None:
    """``score ITEM_DIR`` finds the adapter in item.json and re-scores the bundle."""
    (run,) = [p for p in selftest_run["runs"].iterdir() if p.is_dir()]
    for item in load_report(run).items:
        done = subprocess.run(
            [sys.executable, "-m", "harness", "score", str(run / "items" / item.item_dir)],
            cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        again = ItemResult.from_dict(json.loads(done.stdout))
        assert (again.status, again.score.checks) == (item.status, item.score.checks)


def _assistant_count(path: Path, stream: bool) -> int:
    count = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        wanted = "message_end" if stream else "message"
        if event.get("type") == wanted and (event.get("message") or {}).get("role") == "assistant":
            count += 1
    return count


def test_prime_agent_turns_come_from_the_more_complete_source(selftest_run: dict) -> None:
    """early-exit: the parent keeps working after the CLI's stream ended (its torn-down
    children wake it), so its transcript holds more turns than the stream."""
    if selftest_run["agent"] != "prime-agent":
        pytest.skip("prime-agent's stream and transcript only")
    (run,) = [p for p in selftest_run["runs"].iterdir() if p.is_dir()]
    seen_longer_transcript = False
    for item in load_report(run).items:
        item_dir = run / "items" / item.item_dir
        streamed = _assistant_count(item_dir / "stdout.jsonl", stream=True)
        transcripts = list((item_dir / "sessions").glob("*.jsonl"))
        recorded = _assistant_count(transcripts[0], stream=False) if transcripts else 0
        assert item.score.turns == max(streamed, recorded), item.key
        seen_longer_transcript |= recorded > streamed
    assert seen_longer_transcript, "no item showed turns after the stream ended"


#: The smallest edit fixture (3 tickets, one shared CHANGELOG.md).
EDIT_FIXTURE = REPO / "fixtures" / "edit-smoke"


def test_prime_agent_edit_selftest_holds(
    prime_agent_bin: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every script on an edit fixture, the edit-only ones too, with the real prime-agent:
    its children change the repository with the edit skill; every verdict is the script's
    (lanes and the edit checks included) and the tokens are the bill."""
    base = tmp_path_factory.mktemp("selftest-prime-agent-edit")
    run = selftest_in_fresh_home(
        base, "prime-agent", prime_agent_bin, SELFTEST_TIMEOUT_S, str(EDIT_FIXTURE)
    )
    done = run["done"]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    scripts = [c.script for c in cases_for(parse_agent("prime-agent", "unused"), edit=True)]
    assert {"edit-parent", "edit-wrong-lane"} <= set(scripts)
    rows = [r for r in map(str.split, done.stdout.splitlines()) if r[:1] in (["ok"], ["FAIL"])]
    assert sorted(r[1] for r in rows) == sorted(scripts), done.stdout
    assert all(r[0] == "ok" for r in rows), done.stdout
    assert tree(run["home"]) == [] and tree(run["tmp"]) == [] and run["leftovers"] == []

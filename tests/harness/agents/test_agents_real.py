"""Several real agents in one run, against one scripted model server: Claude Code, opencode,
Codex and Gemini CLI (and the simulated agent: five agents) on the same fixture and model,
side by side in one report, the server playing each by its route and User-Agent. Pins the verdicts,
tokens and cost against what the server billed each client, that nothing lands in the
caller's HOME or TMPDIR and that nothing is left running; and ``selftest`` with the four
real agents in one run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from realkit import REPO, TINY, processes_of_run, tree

from harness.model.report import load_report
from scripted_model import Oracle, ScriptedModelServer
from scripted_model.server import (
    CLAUDE_MESSAGES_API,
    CODEX_RESPONSES_API,
    GEMINI_API,
    OPENCODE_MESSAGES_API,
    PRICES_PER_MTOK,
)

pytestmark = pytest.mark.real_agent

#: Eight agent runs of a few seconds each, three at a time; the margin covers a loaded
#: machine.
RUN_TIMEOUT_S = 400
#: The smallest fixture every script exercises (see test_selftest_real.py).
FIXTURE = TINY
#: Each real agent's model API, as the server keeps its bills (in --agent order).
APIS = {
    "claude-code": CLAUDE_MESSAGES_API,
    "opencode": OPENCODE_MESSAGES_API,
    "codex": CODEX_RESPONSES_API,
    "gemini": GEMINI_API,
}


def _endpoints(base_url: str) -> dict[str, str]:
    """Every client pointed at the one server, the way users point them at theirs."""
    return {
        "ANTHROPIC_BASE_URL": base_url.removesuffix("/v1"),
        "ANTHROPIC_API_KEY": "scripted-no-key",
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "scripted-no-key",
        "GOOGLE_GEMINI_BASE_URL": base_url.removesuffix("/v1"),
        "GEMINI_API_KEY": "scripted-no-key",
    }


def _fresh(base: Path) -> tuple[Path, Path, Path]:
    home, tmp, runs = base / "home", base / "tmp", base / "runs"
    for d in (home, tmp):
        d.mkdir()
    return home, tmp, runs


@pytest.fixture(scope="module")
def side_by_side(
    claude_code_bin: Path,
    opencode_bin: Path,
    codex_bin: Path,
    gemini_bin: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict:
    base = tmp_path_factory.mktemp("agents-side-by-side")
    home, tmp, runs = _fresh(base)
    prices = base / "prices.yaml"
    rates = ", ".join(f"{k}: {v}" for k, v in PRICES_PER_MTOK.items())
    prices.write_text(f"honest: {{{rates}}}\n", encoding="utf-8")
    with ScriptedModelServer(Oracle.from_fixture_dirs([FIXTURE])) as server:
        done = subprocess.run(
            [sys.executable, "-m", "harness", "run",
             "--agent", "claude-code", "--agent", "opencode", "--agent", "codex",
             "--agent", "gemini", "--agent", "sim",
             "--agent-bin", f"claude-code={claude_code_bin}",
             "--agent-bin", f"opencode={opencode_bin}", "--agent-bin", f"codex={codex_bin}",
             "--agent-bin", f"gemini={gemini_bin}",
             "--model", "scripted/honest", "--fixture", str(FIXTURE), "--trials", "2",
             "--concurrency", "3", "--prices", str(prices), "--runs-dir", str(runs)],
            cwd=REPO,
            env={**os.environ, "HOME": str(home), "TMPDIR": str(tmp),
                 **_endpoints(server.base_url)},
            capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
        )  # fmt: skip
        bills = {agent: server.billed("honest", api=api) for agent, api in APIS.items()}
    (run,) = [d for d in runs.iterdir() if d.is_dir()]
    return {
        "done": done,
        "run": run,
        "bills": bills,
        "home": home,
        "tmp": tmp,
        "leftovers": processes_of_run(run.name),
    }


def test_one_report_puts_the_agents_side_by_side(side_by_side: dict) -> None:
    done = side_by_side["done"]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    report = load_report(side_by_side["run"])
    assert [(a.agent, a.models) for a in report.options.agents] == [
        ("claude-code", ("scripted/honest",)),
        ("opencode", ("scripted/honest",)),
        ("codex", ("scripted/honest",)),
        ("gemini", ("scripted/honest",)),
        ("sim", ("sim/honest",)),
    ]
    assert all(a.version for a in report.options.agents[:4])  # what each binary said
    assert sorted((i.agent, i.model, i.status) for i in report.items) == sorted(
        [(a, "scripted/honest", "resolved") for a in APIS for _ in range(2)]
        + [("sim", "sim/honest", "resolved")] * 2
    )
    side = report.agents
    assert side is not None
    assert side.agents == ("claude-code", "opencode", "codex", "gemini", "sim")
    assert [(s.agent, s.n, s.resolved) for s in side.standings] == [
        ("claude-code", 2, 2), ("opencode", 2, 2), ("codex", 2, 2), ("gemini", 2, 2),
        ("sim", 2, 2),
    ]  # fmt: skip
    assert [v.agent for v in side.versus] == ["opencode", "codex", "gemini", "sim"]
    # The real agents ran the same model: compared fixture by fixture on it.
    for versus in side.versus[:3]:
        (cell,) = versus.comparison.fixtures
        assert (cell.fixture, cell.model, cell.delta) == ("tiny", "scripted/honest", 0.0)
    assert "agents side by side (reference claude-code):" in done.stdout


def test_each_agents_tokens_and_cost_are_what_the_server_billed_it(side_by_side: dict) -> None:
    report = load_report(side_by_side["run"])
    for agent, bill in side_by_side["bills"].items():
        mine = [i for i in report.items if i.agent == agent]
        assert bill.requests > 0
        assert sum(i.score.tokens_used for i in mine) == bill.total, agent
        assert all(i.score.usage is not None and i.score.usage.complete for i in mine)
        usd = [i.cost_usd for i in mine]
        assert None not in usd
        assert sum(u for u in usd if u is not None) == pytest.approx(bill.usd, rel=1e-9)
        standing = next(s for s in report.agents.standings if s.agent == agent)  # type: ignore[union-attr]
        assert standing.mean_cost_usd == pytest.approx(bill.usd / 2, rel=1e-9)
        assert standing.tokens_per_resolved is not None
        assert standing.tokens_per_resolved.value == pytest.approx(bill.total / 2)


def test_nothing_lands_in_home_or_tmpdir_and_nothing_is_left_running(side_by_side: dict) -> None:
    assert tree(side_by_side["home"]) == []
    assert tree(side_by_side["tmp"]) == []
    assert side_by_side["leftovers"] == []


def test_selftest_checks_the_four_real_agents_in_one_run(
    claude_code_bin: Path, opencode_bin: Path, codex_bin: Path, gemini_bin: Path, tmp_path: Path
) -> None:
    home, tmp, runs = _fresh(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "harness", "selftest", "--agent", "claude-code",
         "--agent", "opencode", "--agent", "codex", "--agent", "gemini",
         "--agent-bin", f"claude-code={claude_code_bin}",
         "--agent-bin", f"opencode={opencode_bin}", "--agent-bin", f"codex={codex_bin}",
         "--agent-bin", f"gemini={gemini_bin}",
         "--fixture", str(FIXTURE),
         "--script", "honest", "--script", "no-spawn", "--concurrency", "3",
         "--runs-dir", str(runs)],
        cwd=REPO, env={**os.environ, "HOME": str(home), "TMPDIR": str(tmp)},
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    # Two scripts, one passing, one failing: every script's verdict per agent is the
    # per-agent selftest's (test_selftest_real); this checks the agents in one run.
    shared = {"honest", "no-spawn"}
    rows = [r for r in map(str.split, done.stdout.splitlines()) if r[:1] in (["ok"], ["FAIL"])]
    assert sorted((r[1], r[2]) for r in rows) == sorted(
        (agent, script) for agent in APIS for script in shared
    ), done.stdout
    assert all(r[0] == "ok" for r in rows), done.stdout
    (run,) = [d for d in runs.iterdir() if d.is_dir()]
    report = load_report(run)
    assert report.agents is not None and report.agents.agents == tuple(APIS)
    assert tree(home) == [] and tree(tmp) == []
    assert processes_of_run(run.name) == []


def test_every_agents_run_exports_as_valid_atif_that_reads_back(side_by_side: dict) -> None:
    """The five agents' items as ATIF: valid by the ``atif`` models, their final metrics
    what the server billed each agent (tokens and cost), the per-response costs adding up
    to the item's cost, and each re-scored from its file alone to the verdict it got."""
    from atif import Trajectory

    from harness.export.rescore import score_trajectory

    run = side_by_side["run"]
    done = subprocess.run(
        [sys.executable, "-m", "harness", "export", str(run)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = load_report(run)
    spent: dict[str, list[float]] = {}
    for item in report.items:
        path = run / "trajectories" / item.item_dir / "trajectory.json"
        doc = json.loads(path.read_text(encoding="utf-8"))
        Trajectory.model_validate(doc)
        assert doc["agent"]["name"] == item.agent
        final = doc["final_metrics"]
        tokens = final["total_prompt_tokens"] + final["total_completion_tokens"]
        assert tokens == item.score.tokens_used, item.key
        spent.setdefault(item.agent, []).append(tokens)
        if item.agent in APIS:
            assert len(doc["subagent_trajectories"]) == 3, item.key
            assert final["total_cost_usd"] == pytest.approx(item.cost_usd, rel=1e-9)
            steps = [doc, *doc["subagent_trajectories"]]
            per_step = sum(
                s["metrics"].get("cost_usd", 0.0)
                for t in steps
                for s in t["steps"]
                if "metrics" in s
            )
            assert per_step == pytest.approx(item.cost_usd, rel=1e-6), item.key
        verdict = score_trajectory(path, str(FIXTURE), [FIXTURE.parent])
        assert verdict["resolved"] is True and all(verdict["as_exported"].values()), verdict
    for agent, bill in side_by_side["bills"].items():
        assert sum(spent[agent]) == bill.total, agent

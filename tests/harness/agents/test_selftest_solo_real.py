"""``selftest --solo`` with every real client: one script (``honest``) and its solo twin on
the tiny fixture, through the normal run path. The twin is the same agent and model asked
to work alone, which the scripted server plays as a solo parent: it must be resolved under
the solo rubric with no subagent, its tokens and cost what the server billed for the twin
(kept apart from its item's, on the same model), and the item's row must still hold.

Measured here (2 cores, fresh HOME): Claude Code 17 s, opencode 47 s, Codex 10 s per run.
"""

from __future__ import annotations

import pytest
from realkit import selftest_in_fresh_home, tree

from harness.model.report import load_report

pytestmark = pytest.mark.real_agent

#: A run of two items takes well under a minute; the margin covers a loaded 2-core machine.
SOLO_SELFTEST_TIMEOUT_S = 240
#: agent -> the session fixture that finds (or installs) its binary, or skips.
BINARIES = {
    "prime-agent": "prime_agent_bin",
    "claude-code": "claude_code_bin",
    "opencode": "opencode_bin",
    "codex": "codex_bin",
    "gemini": "gemini_bin",
}


@pytest.mark.parametrize("agent", sorted(BINARIES))
def test_the_solo_twin_resolves_alone_on_its_own_bill(
    agent: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    binary = request.getfixturevalue(BINARIES[agent])
    base = tmp_path_factory.mktemp(f"selftest-solo-{agent}")
    options = ("--solo", "--script", "honest")
    run = selftest_in_fresh_home(base, agent, binary, SOLO_SELFTEST_TIMEOUT_S, options=options)
    done = run["done"]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    rows = [r for r in done.stdout.splitlines() if r.split()[:1] in (["ok"], ["FAIL"])]
    assert len(rows) == 2, done.stdout
    assert rows[0].split()[:2] == ["ok", "honest"], done.stdout
    assert rows[1].split()[:3] == ["ok", "honest", "(solo)"], done.stdout
    (run_dir,) = [d for d in run["runs"].iterdir() if d.is_dir()]
    report = load_report(run_dir)
    assert report.options.solo and report.selftest is not None
    assert report.selftest.holding == 2
    (twin,) = [i for i in report.items if i.agent == f"{agent}+solo"]
    (item,) = [i for i in report.items if i.agent == agent]
    assert twin.status == "resolved" and twin.score.total_spawns == 0
    assert item.status == "resolved" and item.score.total_spawns == 3  # the tiny fixture's
    # Tokens = billed is each row's own check; here: the twin's bill is its own, not its item's.
    assert 0 < twin.spent_tokens != item.spent_tokens
    assert tree(run["home"]) == [] and tree(run["tmp"]) == []
    assert run["leftovers"] == []

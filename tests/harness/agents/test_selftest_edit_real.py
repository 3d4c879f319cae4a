"""Every real agent's selftest on an edit fixture: each script (the edit-only ones with them)
holds, its verdict right and its tokens and cost the server's bill.

The smallest edit fixture: the shipped ``edit-smoke`` where it exists, else the tests' own
3-shard ``edit-tiny`` (the same format: one module per shard, a shared changelog).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from realkit import REPO, selftest_in_fresh_home

from harness.agents import parse_agent
from harness.selftest import scripts_for

pytestmark = pytest.mark.real_agent

SHIPPED = REPO / "fixtures" / "edit-smoke"
EDIT_FIXTURE = SHIPPED if SHIPPED.is_dir() else REPO / "tests" / "data" / "fixtures" / "edit-tiny"
#: A selftest of 8 scripts on 3 shards takes about 45 s here (Claude Code); the margin covers
#: a loaded 2-core machine.
SELFTEST_TIMEOUT_S = 420
#: agent -> the session fixture that finds (or installs) its binary, or skips.
BINARIES = {"claude-code": "claude_code_bin", "gemini": "gemini_bin"}


@pytest.mark.parametrize("agent", sorted(BINARIES))
def test_every_script_holds_on_an_edit_fixture(
    agent: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    binary = request.getfixturevalue(BINARIES[agent])
    run = selftest_in_fresh_home(tmp_path, agent, binary, SELFTEST_TIMEOUT_S, str(EDIT_FIXTURE))
    done = run["done"]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    every = scripts_for(parse_agent(agent, "unused"))
    expected = sorted(every)  # an edit fixture plays every script, the edit-only ones too
    assert {"edit-parent", "edit-wrong-lane"} <= set(expected)
    # A row per script, whether it holds first (a wrapped verdict continues below it).
    rows = [r for r in map(str.split, done.stdout.splitlines()) if r[:1] in (["ok"], ["FAIL"])]
    assert sorted(r[1] for r in rows) == expected, done.stdout
    assert all(r[0] == "ok" for r in rows), done.stdout
    assert run["leftovers"] == []

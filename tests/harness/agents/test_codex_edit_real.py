"""The real Codex client on the smallest edit fixture (``selftest --fixture edit-smoke``),
under both multi-agent protocols: every script, the edit-only ones included, gets its
verdict with tokens equal to the bill; the children's patches are read from their own
rollouts and the hidden checks decide; nothing is left under HOME or TMPDIR, nothing of the
run keeps running."""

from __future__ import annotations

from pathlib import Path

import pytest
from realkit import REPO, selftest_in_fresh_home, tree

from harness.agents import parse_agent
from harness.selftest import cases_for

pytestmark = pytest.mark.real_agent

#: The edit selftest takes about two minutes at concurrency 3 here; the margin covers a
#: loaded 2-core machine.
EDIT_SELFTEST_TIMEOUT_S = 600
EDIT_SMOKE = REPO / "fixtures" / "edit-smoke"


@pytest.mark.parametrize("agent", ["codex", "codex:v2"])
def test_every_script_holds_on_the_edit_fixture(
    agent: str, codex_bin: Path, tmp_path: Path
) -> None:
    if not (EDIT_SMOKE / "fixture.json").is_file():
        pytest.skip("fixtures/edit-smoke is not shipped in this checkout")
    run = selftest_in_fresh_home(
        tmp_path, agent, codex_bin, EDIT_SELFTEST_TIMEOUT_S, str(EDIT_SMOKE)
    )
    done = run["done"]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    rows = [r for r in map(str.split, done.stdout.splitlines()) if r[:1] in (["ok"], ["FAIL"])]
    expected = [c.script for c in cases_for(parse_agent(agent, "unused"), "edit")]
    assert sorted(r[1] for r in rows) == sorted(expected), done.stdout
    assert {"edit-parent", "edit-wrong-lane"} <= {r[1] for r in rows}
    assert all(r[0] == "ok" for r in rows), done.stdout
    assert tree(run["home"]) == [] and tree(run["tmp"]) == []
    assert run["leftovers"] == []

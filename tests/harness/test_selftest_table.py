"""The selftest table fits 100 columns with every agent's every script, faults and all,
and says for each row whether it holds and, where not, what differs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.report.columns import WIDTH
from harness.selftest import SelftestCase, SelftestOutcome, SelftestRow, render_table
from scripted_model import SCRIPTS_BY_API

AGENTS = {
    "prime-agent": "openai-completions",
    "claude-code": "anthropic-messages",
    "opencode": "anthropic-messages:opencode",
    "codex": "openai-responses:codex",
}
RUN_DIR = Path("/tmp/runs/20260101T000000Z-abcdef")


def row(agent: str, fixture: str, script: object, **changes: object) -> SelftestRow:
    """A row that holds: the script's verdict, the tokens and cost the server billed, as
    large as real ones get (a quarter of a million tokens, seven-figure requests)."""
    case = SelftestCase(
        script.name,  # type: ignore[attr-defined]
        script.expected_status,  # type: ignore[attr-defined]
        script.expected_failing,  # type: ignore[attr-defined]
        script.may_fail,  # type: ignore[attr-defined]
    )
    fields: dict[str, object] = {
        "fixture": fixture, "case": case, "status": case.expected_status,
        "failing": case.expected_failing, "error": None, "turns": 124,
        "server_requests": 1375, "item_dir": "d", "tokens": 256_115, "billed": 256_115,
        "cost_usd": 0.768345, "billed_usd": 0.768345, "agent": agent,
        "faults": 2, "faults_served": 2, "attempts": 2,
    }  # fmt: skip
    fields.update(changes)
    return SelftestRow(**fields)  # type: ignore[arg-type]


def outcome(rows: list[SelftestRow], agents: tuple[str, ...]) -> SelftestOutcome:
    versions = tuple(f"{a} 2.1.332 (Claude Code)" for a in agents)
    return SelftestOutcome(tuple(rows), RUN_DIR, agents, versions)


def every_agent(fixtures: tuple[str, ...]) -> tuple[SelftestOutcome, list[SelftestRow]]:
    rows = [
        row(agent, fixture, script)
        for fixture in sorted(fixtures)
        for agent, api in AGENTS.items()
        for script in SCRIPTS_BY_API[api].values()
    ]
    # Rows that do not hold, each in its own way, and one that holds on a lower bound.
    first = sorted(fixtures)[0]
    rows[0] = row("prime-agent", first, SCRIPTS_BY_API["openai-completions"]["honest"],
                  status="unresolved", failing=("coverage", "receipts", "provenance"))  # fmt: skip
    rows[1] = row("prime-agent", first, SCRIPTS_BY_API["openai-completions"]["no-spawn"],
                  tokens=250_000, usage_complete=False, cost_usd=0.7)  # fmt: skip
    rows[2] = row("prime-agent", first, SCRIPTS_BY_API["openai-completions"]["helper-names"],
                  status="error", error="agent exited 1 before any model reply: " + "x" * 150)  # fmt: skip
    rows[3] = row("prime-agent", first, SCRIPTS_BY_API["openai-completions"]["wrong-answer"],
                  tokens=1, cost_usd=None)  # fmt: skip
    return outcome(rows, tuple(AGENTS)), rows


@pytest.mark.parametrize(
    "fixtures",
    [("json-events",), ("nested-json-events-large", "csv-metrics")],
    ids=["one-fixture", "two-fixtures"],
)
def test_every_agent_and_script_fits_100_columns(fixtures: tuple[str, ...]) -> None:
    result, rows = every_agent(fixtures)
    text = render_table(result)
    lines = text.splitlines()
    assert [line for line in lines if len(line) > WIDTH] == []
    # A line per row (continuations aside), starting with whether it holds, naming its
    # agent (a column: there are several) and script, and its fixture where there are two.
    holds = [line.split() for line in lines if line.split()[:1] in (["ok"], ["FAIL"])]
    assert len(holds) == len(rows)
    for shown, r in zip(holds, rows, strict=True):
        assert shown[:3] == ["ok" if r.ok else "FAIL", r.agent, r.case.script]
    # Rows come by fixture, each fixture's under its name where there are several.
    sections = [line for line in lines if line.startswith("on ")]
    assert sections == ([f"on {f}:" for f in sorted(fixtures)] if len(fixtures) > 1 else [])
    assert f"{len(rows) - 3}/{len(rows)} rows hold" in text and str(RUN_DIR) in text


def test_a_row_that_does_not_hold_says_what_differs() -> None:
    result, _ = every_agent(("json-events",))
    text = " ".join(render_table(result).split())
    assert "unresolved (coverage, receipts, provenance); expected resolved" in text
    assert "tokens 250,000 <= 256,115 billed; cost $0.700000 <= $0.768345 billed" in text
    assert "agent exited 1 before any model reply" in text
    assert "cost unpriced != $0.768345 billed" in text and "tokens 1 != 256,115 billed" in text


def test_one_agent_on_one_fixture_says_both_once() -> None:
    scripts = SCRIPTS_BY_API["anthropic-messages"].values()
    rows = [
        row("claude-code", "json-events", s, faults=0, faults_served=0, attempts=1) for s in scripts
    ]
    lines = render_table(outcome(rows, ("claude-code",))).splitlines()
    assert lines[0] == "selftest of claude-code (claude-code 2.1.332 (Claude Code)) on json-events"
    assert lines[1].split() == ["script", "turns", "reqs", "tokens", "cost", "verdict"]
    assert lines[2].split()[:6] == ["ok", "honest", "124", "1375", "256,115", "$0.7683"]
    assert lines[2].split()[6:] == ["resolved"]


def test_a_solo_twin_s_row_follows_its_item_s_named_as_the_twin() -> None:
    honest = SCRIPTS_BY_API["anthropic-messages"]["honest"]
    item = row("claude-code", "tiny", honest, faults=0, faults_served=0, attempts=1)
    twin = replace(item, case=item.case.twin(), agent="claude-code+solo", turns=5)
    delegated = replace(twin, spawns=3)
    text = render_table(outcome([item, twin], ("claude-code",)))
    lines = [line.split() for line in text.splitlines() if line[:2] in ("ok", "FA")]
    assert [line[:3] for line in lines] == [["ok", "honest", "124"], ["ok", "honest", "(solo)"]]
    text = render_table(outcome([item, delegated], ("claude-code",)))
    assert "FAIL  honest (solo)" in text and "3 subagents started" in text, text

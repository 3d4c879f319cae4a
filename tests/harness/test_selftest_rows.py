"""A selftest row holds when the must-fail criteria fail and nothing else but the
timing-dependent ones."""

from __future__ import annotations

import pytest

from harness.selftest import SelftestCase, SelftestRow

CASE = SelftestCase("early-exit", "unresolved", ("coverage", "receipts"), ("delegation",))


@pytest.mark.parametrize(
    ("failing", "ok"),
    [
        pytest.param(("coverage", "receipts"), True, id="exactly-the-must"),
        pytest.param(("coverage", "delegation", "receipts"), True, id="plus-the-timing-one"),
        pytest.param(("coverage",), False, id="a-must-passed"),
        pytest.param(("coverage", "dedup", "receipts"), False, id="an-unexpected-failure"),
    ],
)
def test_row_holds(failing: tuple[str, ...], ok: bool) -> None:
    row = SelftestRow("tiny", CASE, "unresolved", failing, None, 1, 1, "d", cost_usd=0.0)
    assert row.ok is ok


def test_status_must_match() -> None:
    row = SelftestRow("tiny", CASE, "resolved", (), None, 1, 1, "d")
    assert not row.ok


@pytest.mark.parametrize(
    ("tokens", "billed", "complete", "ok"),
    [
        pytest.param(100, 100, True, True, id="equal"),
        pytest.param(99, 100, True, False, id="short-of-the-bill"),
        pytest.param(101, 100, True, False, id="more-than-billed"),
        pytest.param(90, 100, False, True, id="lower-bound-below"),
        pytest.param(101, 100, False, False, id="lower-bound-above"),
    ],
)
def test_tokens_must_be_what_the_server_billed(
    tokens: int, billed: int, complete: bool, ok: bool
) -> None:
    row = SelftestRow(
        "tiny", CASE, "unresolved", ("coverage", "receipts"), None, 1, 1, "d",
        tokens=tokens, billed=billed, usage_complete=complete, cost_usd=0.0,
    )  # fmt: skip
    assert row.verdict_ok and row.tokens_ok is ok and row.ok is ok


@pytest.mark.parametrize(
    ("cost", "billed", "complete", "ok"),
    [
        pytest.param(0.4605789, 0.4605789, True, True, id="equal"),
        pytest.param(0.4605788, 0.4605789, True, False, id="a-micro-dollar-short"),
        pytest.param(None, 0.4605789, True, False, id="unpriced"),
        pytest.param(0.3, 0.4605789, False, True, id="lower-bound-below"),
        pytest.param(0.5, 0.4605789, False, False, id="lower-bound-above"),
    ],
)
def test_cost_must_be_the_price_of_what_the_server_billed(
    cost: float | None, billed: float, complete: bool, ok: bool
) -> None:
    row = SelftestRow(
        "tiny", CASE, "unresolved", ("coverage", "receipts"), None, 1, 1, "d",
        usage_complete=complete, cost_usd=cost, billed_usd=billed,
    )  # fmt: skip
    assert row.tokens_ok and row.cost_ok is ok and row.ok is ok


def test_an_errored_row_is_not_held_to_the_bill() -> None:
    row = SelftestRow("tiny", CASE, "error", (), "boom", 0, 0, "d", tokens=5, billed=9)
    assert row.tokens_ok and row.cost_ok


TWIN = SelftestCase("wrong-answer", "unresolved", ("coverage",)).twin()


@pytest.mark.parametrize(
    ("status", "failing", "spawns", "ok"),
    [
        pytest.param("resolved", (), 0, True, id="resolved-alone"),
        # Whatever its script, a twin is played as a solo parent: its own verdict never holds.
        pytest.param("unresolved", ("coverage",), 0, False, id="the-script-s-verdict"),
        pytest.param("resolved", (), 2, False, id="the-solo-arm-delegated"),
    ],
)
def test_a_solo_twin_holds_resolved_with_no_subagent(
    status: str, failing: tuple[str, ...], spawns: int, ok: bool
) -> None:
    row = SelftestRow(
        "tiny", TWIN, status, failing, None, 1, 1, "d", cost_usd=0.0, spawns=spawns,  # type: ignore[arg-type]
        agent="claude-code+solo",
    )  # fmt: skip
    assert row.ok is ok
    verdict = row.verdict()
    assert (verdict.script, verdict.expected) == ("wrong-answer (solo)", "resolved, no subagent")
    if spawns:
        assert verdict.why == ("verdict: expected resolved, no subagent, got resolved, "
                               "2 subagents started",)  # fmt: skip


def test_a_twin_s_case_ignores_its_script_s_edit_failures() -> None:
    case = SelftestCase("helper-names", "unresolved", ("delegation",), edit_failing=("lanes",))
    assert case.twin().on("edit").expected_failing == ()
    assert case.on("edit").expected_failing == ("delegation", "lanes")

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
    row = SelftestRow("tiny", CASE, "unresolved", failing, None, 1, 1, "d")
    assert row.ok is ok


def test_status_must_match() -> None:
    row = SelftestRow("tiny", CASE, "resolved", (), None, 1, 1, "d")
    assert not row.ok

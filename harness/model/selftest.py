"""A selftest's verdict as its report records it: a row per item (one agent playing one
scripted behaviour on one fixture) and whether it held.

A selftest checks the harness, not an agent: its scripts are meant to fail where they cheat,
so its items' resolved rate says nothing, and its prices are the scripted server's play
prices, never money. Every renderer leads with its verdict instead
(:mod:`harness.model.selftest_text`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.model.record import Record

#: What a selftest row checks besides the verdict: the tokens and their price against the
#: server's bill, and the provider faults against those the server's fault plan served.
SelftestCheck = Literal["verdict", "tokens", "cost", "faults"]

#: The name of the price table a selftest prices its items with (reports of schema 9 and
#: earlier are known as selftests by it).
SCRIPTED_PRICES = "the scripted server's prices"


@dataclass(frozen=True)
class SelftestRowVerdict(Record):
    """One item of a selftest: the verdict its script expects, the one the harness reached,
    and what of the row did not hold."""

    key: str
    agent: str
    fixture: str
    script: str
    expected: str
    actual: str
    #: The checks that did not hold (empty: the row holds).
    failed: tuple[SelftestCheck, ...]
    #: Each of them in words, e.g. ``tokens: 120 counted, 130 billed``.
    why: tuple[str, ...]

    @property
    def holds(self) -> bool:
        return not self.failed


@dataclass(frozen=True)
class SelftestVerdict(Record):
    """A selftest's rows, judged once its run finished; it passes when every row holds
    and every planned row ran."""

    rows: tuple[SelftestRowVerdict, ...]

    @property
    def holding(self) -> int:
        return sum(1 for r in self.rows if r.holds)


#: How a selftest's cost reads wherever a run's cost would be shown.
PLAY_PRICES = "play prices (the scripted server's), not money"


__all__ = [
    "PLAY_PRICES",
    "SCRIPTED_PRICES",
    "SelftestCheck",
    "SelftestRowVerdict",
    "SelftestVerdict",
]

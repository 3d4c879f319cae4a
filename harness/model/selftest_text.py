"""How a selftest's verdict reads: the headline its pages lead with, and its rows."""

from __future__ import annotations

from harness.model.report import RunReport
from harness.model.selftest import SelftestRowVerdict


def selftest_headline(report: RunReport) -> str:
    """A selftest's verdict in one line, the first thing its pages say (in place of the
    resolved verdict: its items are expected to fail where a script cheats)."""
    verdict = report.selftest
    not_run = len(report.not_started)
    if verdict is None:
        return "SELFTEST NOT JUDGED: it stopped before its rows were checked"
    rows = len(verdict.rows)
    failing = rows - verdict.holding
    if failing:
        head = f"SELFTEST FAILS: {failing} of {rows} rows do not hold"
    elif report.interrupted or not_run or not rows:
        head = f"SELFTEST STOPPED: {verdict.holding} of {rows} rows hold"
    else:
        return f"SELFTEST HOLDS: all {rows} rows hold"
    return head + (f", {not_run} not run" if not_run else "")


def selftest_passed(report: RunReport) -> bool | None:
    """Whether a judged selftest passed (None: not a selftest, or not judged)."""
    verdict = report.selftest
    if not report.options.selftest or verdict is None:
        return None
    return (
        bool(verdict.rows)
        and verdict.holding == len(verdict.rows)
        and not report.not_started
        and not report.interrupted
    )


def shown_rows(report: RunReport) -> tuple[SelftestRowVerdict, ...]:
    """The rows a selftest's pages show: its judged rows, or (not judged) a row per item
    that ran, with nothing expected and nothing failed."""
    if report.selftest is not None:
        return report.selftest.rows
    return tuple(
        SelftestRowVerdict(
            key=i.key,
            agent=i.agent,
            fixture=i.fixture,
            script=i.model.partition("/")[2] or i.model,
            expected="?",
            actual=i.status,
            failed=(),
            why=("not judged",),
        )
        for i in report.items
    )


def holds_text(row: SelftestRowVerdict, judged: bool = True) -> str:
    """``yes``, ``NO: <why>``, or ``not judged``."""
    if not judged:
        return "not judged"
    return "yes" if row.holds else "NO: " + "; ".join(row.why)


__all__ = ["holds_text", "selftest_headline", "selftest_passed", "shown_rows"]

"""The head of a selftest's report.html: its verdict and its rows, in place of a run's
resolved verdict, rates and costs (a selftest's scripts are meant to fail where they
cheat, and its prices are the scripted server's play prices, not money)."""

from __future__ import annotations

from harness.model.provider_text import health_line
from harness.model.report import RunReport
from harness.model.selftest import PLAY_PRICES
from harness.model.selftest_text import holds_text, selftest_headline, selftest_passed, shown_rows
from harness.model.text import format_duration, format_when, plural
from harness.report.html_parts import esc, item_anchor


def selftest_banner(report: RunReport) -> str:
    """The selftest's verdict, coloured: green when every row held, red when one did not,
    amber when it stopped or was not judged."""
    passed = selftest_passed(report)
    failing = report.selftest is not None and any(not r.holds for r in report.selftest.rows)
    tone = "pass" if passed else "fail" if failing else "stopped"
    verdict = report.selftest
    counts = (
        ""
        if verdict is None
        else f' data-rows="{len(verdict.rows)}" data-holding="{verdict.holding}"'
    )
    return (
        f'<div id="banner" class="banner {tone}" data-selftest="true"'
        f' data-passed="{"" if passed is None else str(passed).lower()}"{counts}>'
        f"<b>{esc(selftest_headline(report))}</b></div>"
    )


def selftest_header(report: RunReport) -> str:
    """Who was checked, on what, when; the tokens, and the cost said to be play prices."""
    o = report.options
    took = "" if report.duration_s is None else format_duration(report.duration_s)
    agents = ", ".join(a.agent + (f" ({a.version})" if a.version else "") for a in o.agents)
    facts = [
        ("selftest", report.run_id),
        ("date", format_when(report.started_at or report.created_at)),
        ("took", took),
        ("agents" if len(o.agents) > 1 else "agent", agents or o.agent),
        ("fixtures", ", ".join(sorted({i.fixture for i in report.items}))),
        ("harness", report.harness_version),
    ]
    tokens = sum(i.spent_tokens for i in report.items)
    lines = [
        f"<h1>swarm-harness selftest {esc(report.run_id)}</h1>",
        '<p class="meta">' + " · ".join(f"{k}: <b>{esc(v)}</b>" for k, v in facts if v) + "</p>",
        f'<p id="total-cost" data-tokens="{tokens}" data-play="true">'
        f"{tokens:,} tokens; cost: {esc(PLAY_PRICES)}.</p>",
    ]
    if report.not_started:
        lines.append(f'<p class="meta">{plural(len(report.not_started), "item")} not started.</p>')
    if report.provider is not None:
        lines.append(f'<p class="meta" id="provider">{esc(health_line(report.provider))}</p>')
    lines.extend(f'<p class="meta">Note: {esc(note)}</p>' for note in report.notes)
    return "\n".join(lines)


def selftest_rows(report: RunReport) -> str:
    """A row per item: the script, the verdict it expects, the harness's, and whether the
    row held (what did not, where it did not)."""
    judged = report.selftest is not None
    body = "".join(
        f'<tr data-key="{esc(r.key)}" data-holds="{str(r.holds).lower() if judged else ""}">'
        f'<td><a href="#{item_anchor(r.key)}">{esc(r.key)}</a></td><td>{esc(r.agent)}</td>'
        f"<td>{esc(r.fixture)}</td><td>{esc(r.script)}</td><td>{esc(r.expected)}</td>"
        f"<td>{esc(r.actual)}</td>"
        f'<td class="{"right" if r.holds and judged else "wrong"}">{esc(holds_text(r, judged))}</td>'
        "</tr>"
        for r in shown_rows(report)
    )
    return (
        "<h2>Rows</h2>"
        '<p class="meta">A row per item: an agent playing one script of the scripted model '
        "server on one fixture. It holds when the harness reached the verdict the script "
        "expects and counted the tokens (and their price) the server billed.</p>"
        '<table id="selftest-rows"><tr><th>item</th><th>agent</th><th>fixture</th>'
        "<th>script</th><th>expected</th><th>actual</th><th>holds</th></tr>"
        f"{body}</table>"
    )

"""How the model's values read in text: rates, differences, intervals, durations, and why
an item did not resolve. Every renderer (and the gate's reasons) uses these, so the same
number never reads two ways."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from harness.model.agents import AgentsComparison, AgentStanding, AgentVersus
from harness.model.comparison import BaselineRun, Comparison, CostComparison
from harness.model.item import ItemResult

if TYPE_CHECKING:
    from harness.model.report import RunReport
    from scorers import ItemScore
from harness.model.record import Interval
from harness.model.summary import Estimate, FixtureSummary, PerResolved, SwarmVsSolo


def format_pct(value: float | None, digits: int = 1) -> str:
    """A rate in percent: ``46.7%``; ``n/a`` without one."""
    return "n/a" if value is None else f"{100 * value:.{digits}f}%"


def format_ci(ci: Interval | None, digits: int = 1) -> str:
    """A rate interval in percent: ``[31.3, 83.2]``; ``n/a`` without one."""
    return "n/a" if not ci else f"[{100 * ci[0]:.{digits}f}, {100 * ci[1]:.{digits}f}]"


def format_pp(value: float | None) -> str:
    """A rate difference in percentage points, signed, one decimal: ``-46.7 pp``."""
    if value is None:
        return "n/a"
    points = round(100.0 * value, 1)
    return f"{points + 0.0:+.1f} pp"  # + 0.0 turns -0.0 into 0.0


def format_ci_pp(ci: Interval | None) -> str:
    """A difference's interval in percentage points: ``[-80.0 pp, -12.5 pp]``."""
    return "n/a" if not ci else f"[{format_pp(ci[0])}, {format_pp(ci[1])}]"


def format_usd(value: float | None) -> str:
    """Dollars with four significant decimals below $1: ``$0.0222``, ``$12.40``; ``n/a``."""
    if value is None:
        return "n/a"
    return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"


def format_amount(value: float | None, unit: str) -> str:
    """An amount of ``usd`` (``$0.0222``) or ``tokens`` (``21,085 tokens``)."""
    if unit == "usd":
        return format_usd(value)
    return "n/a" if value is None else f"{value:,.0f} tokens"


def unit_label(unit: str) -> str:
    """How a cost unit reads: ``USD`` or ``tokens``."""
    return "USD" if unit == "usd" else "tokens"


def format_ratio(value: float | None) -> str:
    """A cost ratio: ``x1.23``; ``n/a``."""
    return "n/a" if value is None else f"x{value:.2f}"


def format_ratio_ci(ci: Interval | None) -> str:
    """A ratio's interval: ``[x0.95, x1.40]``; ``n/a``."""
    return "n/a" if not ci else f"[{format_ratio(ci[0])}, {format_ratio(ci[1])}]"


def format_per_resolved_ci(entry: PerResolved | None, unit: str) -> str | None:
    """``95% CI $0.0180 to $0.0391`` (``or more`` when unbounded above); None without one."""
    if entry is None or entry.ci is None:
        return None
    low, high = entry.ci
    upper = "or more" if high is None else f"to {format_amount(high, unit)}"
    return f"95% CI {format_amount(low, unit)} {upper}"


def format_per_resolved(entry: PerResolved | None, unit: str) -> str:
    """``$0.0222 per resolved item (95% CI $0.0180 to $0.0391)``; an unbounded upper limit
    reads ``or more``; ``n/a`` when nothing resolved."""
    if entry is None:
        return "n/a"
    if entry.value is None:
        return "no resolved item"
    text = f"{format_amount(entry.value, unit)} per resolved item"
    ci = format_per_resolved_ci(entry, unit)
    return text + (f" ({ci})" if ci else "")


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 error``, ``2 errors`` (``words`` for an irregular plural)."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def format_when(stamp: str) -> str:
    """An ISO-8601 time as people read it: ``2026-12-01 15:24 UTC`` (``?`` if unreadable)."""
    import datetime as dt

    try:
        when = dt.datetime.fromisoformat(stamp)
    except ValueError:
        return stamp or "?"
    if when.tzinfo is not None:
        when = when.astimezone(dt.UTC)
    return when.strftime("%Y-%m-%d %H:%M UTC")


def several_agents(report: RunReport) -> bool:
    """Whether the run compared agents (``--agent`` given more than once) or ran solo twins
    (``--solo``): then every fixture x model row names its agent (a twin's ``+solo``)."""
    return len(report.options.agents) > 1 or report.options.solo


def condition_label(agent: str, model: str, with_agent: bool = True) -> str:
    """What one condition of a run is called: ``model``, or ``agent · model`` where the
    agent is a dimension (``with_agent``, and the agent known)."""
    return f"{agent} · {model}" if with_agent and agent else model


def standing_line(s: AgentStanding) -> str:
    """One agent x model over the run: ``agent-a · anthropic/x: 83.3% resolved, 95% CI
    [..], $0.46 per item, $0.55 per resolved item (95% CI $0.47 to $0.80), 307,338 tokens
    per resolved item (95% CI ..)``; nothing resolved: ``no resolved item``."""
    if s.mean_cost_usd is not None:
        cost = f"{format_usd(s.mean_cost_usd)} per item, " + format_per_resolved(
            s.cost_per_resolved_usd, "usd"
        )
    else:
        cost = f"{format_amount(s.mean_tokens, 'tokens')} per item"
    tokens = s.tokens_per_resolved
    if tokens is not None and (tokens.value is not None or s.mean_cost_usd is None):
        cost += f", {format_per_resolved(tokens, 'tokens')}"
    return (
        f"{condition_label(s.agent, s.model)}: {format_pct(s.rate)} resolved, 95% CI "
        f"{format_ci(s.ci)} ({s.resolved}/{s.n} over {plural(s.fixtures, 'fixture')}"
        + (f", {plural(s.errors, 'error')}" if s.errors else "")
        + f"), {cost}"
    )


def standing_cost_cells(s: AgentStanding) -> tuple[str, str, str, str]:
    """An agent x model's cost columns: per item (USD, else tokens), per resolved item,
    tokens per resolved item, mean wall time."""
    per_item = (
        format_usd(s.mean_cost_usd)
        if s.mean_cost_usd is not None
        else format_amount(s.mean_tokens, "tokens")
    )
    wall = "n/a" if s.mean_wall_time_s is None else format_duration(s.mean_wall_time_s)
    return (
        per_item,
        per_resolved_cell(s.cost_per_resolved_usd, "usd"),
        per_resolved_cell(s.tokens_per_resolved, "tokens"),
        wall,
    )


def per_resolved_cell(entry: PerResolved | None, unit: str) -> str:
    """A cost per resolved item with its interval beside it (``n/a``: some item unpriced)."""
    if entry is None:
        return "n/a"
    interval = format_per_resolved_ci(entry, unit)
    text = format_amount(entry.value, unit) if entry.value is not None else "no resolved item"
    return text + (f" ({interval})" if interval else "")


#: A rate verdict as said of one agent against another (the same test as a candidate run's
#: against its baseline).
VERSUS_WORDS = {"improved": "better", "regressed": "worse"}


def versus_line(v: AgentVersus) -> str:
    """``agent-b against agent-a: better, +20.0 pp, 95% CI [..] over 2 fixtures;
    cost: same, x1.02 agent-a's per item ...``."""
    o = v.comparison.overall
    text = (
        f"{v.agent} against {v.reference}: {VERSUS_WORDS.get(o.verdict, o.verdict)}, "
        f"{format_pp(o.delta)}, 95% CI {format_ci_pp(o.ci)} over {plural(o.strata, 'fixture')}"
    )
    cost = versus_cost_line(v)
    return text if cost is None else f"{text}; {cost}"


def versus_cost_line(v: AgentVersus) -> str | None:
    """The cost verdict of an agent against the reference (None: not compared)."""
    cost = v.comparison.cost
    return None if cost is None else cost_comparison_line(cost, f"{v.reference}'s")


def agents_lines(agents: AgentsComparison) -> list[str]:
    """The agents side by side: a line per agent x model, then each agent against the
    reference (these inform; no gate reads them)."""
    return [
        f"agents side by side (reference {agents.reference}):",
        *(f"  {standing_line(s)}" for s in agents.standings),
        *(f"  {versus_line(v)}" for v in agents.versus),
    ]


def baseline_label(cmp: Comparison) -> str:
    """The baseline as a person identifies it: run id, agent, model and date (else its
    path)."""
    return cmp.baseline if cmp.baseline_run is None else describe_run(cmp.baseline_run)


def describe_run(run: BaselineRun) -> str:
    """``run 20261207T...-1a2b3c (sim, model sim/honest, 2026-12-07 12:41 UTC)``."""
    shown = ", ".join(run.models[:3]) + (f" +{len(run.models) - 3}" if len(run.models) > 3 else "")
    word = "model" if len(run.models) == 1 else "models"
    return (
        f"run {run.run_id} ({run.agent}, {word} {shown or 'none'}, {format_when(run.created_at)})"
    )


def _plain(text: str) -> str:
    return text


def comparison_sentences(
    cmp: Comparison,
    code: Callable[[str], str] = _plain,
    strong: Callable[[str], str] = _plain,
) -> list[str]:
    """What a comparison says before its table, a sentence a line: the overall verdict
    with its interval, the fixtures as a random sample, the trials for power, the
    sequential verdict, the shared cells, the gate, what one side lacks. ``code`` and
    ``strong`` mark options and verdicts up (Markdown's backticks and bold; plain text
    leaves them as they are)."""
    o = cmp.overall
    lines = [f"Comparison failed: {cmp.error}"] if cmp.error else []
    lines.append(
        f"Overall ({o.strata} fixtures, equal weight): {strong(o.verdict)}, "
        f"Δ {format_pp(o.delta)}, 95% CI {format_ci_pp(o.ci)}, "
        f"threshold ±{100 * cmp.threshold:.1f} pp; wins/losses/ties "
        f"{cmp.wins}/{cmp.losses}/{cmp.ties}; expected disagreement "
        f"{format_pct(o.disagreement)}"
    )
    rf = o.random_fixtures
    if rf is not None:
        lines.append(
            f"Fixtures as a random sample (not gating): Δ {format_pp(rf.delta)}, "
            f"95% CI {format_ci_pp(rf.ci)}"
        )
    if o.trials_for_power:
        lines.append(
            f"Inconclusive: about {o.trials_for_power} trials per fixture in each run would "
            "detect a drop of the threshold with 80% power."
        )
    if cmp.sequential is not None:
        seq = cmp.sequential
        lines.append(
            f"Sequential verdict ({code('--trials auto')}, anytime-valid, alpha "
            f"{seq.alpha:.3g} split over {plural(seq.cells, 'cell')}; what the gate reads): "
            + strong(seq.status)
            + (f": {', '.join(seq.regressed_cells)}" if seq.regressed_cells else "")
            + ". The fixed-sample verdict above is for reference: its interval is not valid "
            "after a stop that depended on the results."
        )
    shared = cmp.shared_line()
    if shared is not None:
        lines.append(shared[0].upper() + shared[1:] + ".")
    lines.append(
        f"Gate ({code('--fail-on regression')}): "
        + ("passes" if cmp.gate.passed else "FAILS: " + "; ".join(cmp.gate.reasons))
    )
    for side, missing in (
        ("candidate", cmp.missing_in_candidate),
        ("baseline", cmp.missing_in_baseline),
    ):
        if missing:
            lines.append(f"Missing in the {side}: " + ", ".join(m.label() for m in missing))
    return lines


def cost_gate_line(cost: CostComparison, code: Callable[[str], str] = _plain) -> str:
    """``Gate (--fail-on cost): passes`` (or ``FAILS: ...`` and why)."""
    return f"Gate ({code('--fail-on cost')}): " + (
        "passes" if cost.gate.passed else "FAILS: " + "; ".join(cost.gate.reasons)
    )


def agents_reference_line(agents: AgentsComparison, code: Callable[[str], str] = _plain) -> str:
    """Which agent the others are compared with, and that no gate reads these."""
    return (
        f"Reference: {code(agents.reference)}"
        + (f" (the first {code('--agent')})" if agents.reference == agents.agents[0] else "")
        + "; each other agent is compared with it as a candidate with its baseline. These "
        "comparisons inform; no gate reads them."
    )


def _timed_out(item: ItemResult) -> str:
    limit = item.facts.timeout_s
    return "timed out" + (f" after {limit:g} s" if limit is not None else "")


#: The first failure reason a one-line cause quotes is cut after this many characters (the
#: whole reasons stay in ``show`` and report.md).
CAUSE_REASON_CHARS = 160


def item_cause(item: ItemResult) -> str:
    """Why an item did not resolve, in one short line, the cause first: an error says only
    its cause (its criteria are not the agent's doing); a time-out says so and names the
    failed criteria; otherwise the first failed criterion's reason, then the names of the
    others. Empty for a resolved item."""
    if item.status == "resolved":
        return ""
    if item.status == "error":
        return str(item.facts.error)
    failed = item.score.failed_criteria
    if item.facts.timed_out:
        return f"{_timed_out(item)}; failed: {', '.join(failed)}" if failed else _timed_out(item)
    first = item.score.failures[0] if failed else "failed"
    if len(first) > CAUSE_REASON_CHARS:
        first = first[: CAUSE_REASON_CHARS - 1].rstrip() + "…"
    return first + (f" (also failed: {', '.join(failed[1:])})" if len(failed) > 1 else "")


def item_reasons(item: ItemResult) -> list[str]:
    """Why an item did not resolve, in full: the cause, then one reason per failed
    criterion (none for an error)."""
    if item.status == "resolved":
        return []
    if item.status == "error":
        return [str(item.facts.error)]
    head = [_timed_out(item)] if item.facts.timed_out else []
    return [*head, *item.score.failures]


def verdict_line(report: RunReport) -> str:
    """The run's verdict in one line, the first thing every report says: resolved or not,
    then (with a baseline) the comparison's verdict and whether the gate passes."""
    total = len(report.swarm_items)
    unresolved, errors = report.count("unresolved"), report.count("error")
    budget = report.budget
    if report.resolved:
        head = f"RESOLVED: all {plural(total, 'item')} resolved"
    elif budget is not None and budget.exhausted and report.not_started and not report.interrupted:
        head = (
            f"BUDGET RAN OUT: {report.count('resolved')} of {total} items resolved, "
            f"{len(report.not_started)} not started"
        )
    elif (
        report.provider is not None
        and report.provider.stopped
        and report.not_started
        and not report.interrupted
    ):
        head = (
            f"STOPPED ({report.provider.stopped}): {report.count('resolved')} of {total} "
            f"items resolved, {len(report.not_started)} not started"
        )
    elif report.interrupted or report.not_started:
        head = f"INTERRUPTED: {report.count('resolved')} of {total} items resolved"
    else:
        parts = [f"{unresolved} unresolved"] if unresolved else []
        parts += [plural(errors, "error")] if errors else []
        head = f"NOT RESOLVED: {', '.join(parts) or 'nothing ran'} of {plural(total, 'item')}"
    twins = report.solo_items
    if twins:
        resolved = sum(1 for i in twins if i.resolved)
        head += f" (solo twins: {resolved} of {len(twins)} resolved)"
    cmp = report.comparison
    if cmp is None:
        return head
    o = cmp.overall
    gate = "gate passes" if cmp.gate.passed else "gate FAILS: " + "; ".join(cmp.gate.reasons)
    cost = ""
    if cmp.sequential is not None:
        cost += f"; sequential: {cmp.sequential.status}"
    if cmp.cost is not None:
        cost = f"; cost {cmp.cost.overall.verdict} ({format_ratio(cmp.cost.overall.ratio)})"
    shared = (
        f" on {len(cmp.fixtures)} of {cmp.baseline_cells or 0} baseline cells"
        if cmp.shared_only
        else ""
    )
    return f"{head}; vs baseline{shared}: {o.verdict} ({format_pp(o.delta)}){cost}; {gate}"


def budget_line(report: RunReport) -> str | None:
    """What the budget allowed and what the run spent (None: no budget); ``RUN`` stands
    for the run directory, which the caller knows."""
    b = report.budget
    if b is None:
        return None
    unpriced = f" ({plural(b.unpriced_items, 'item')} without a price)" if b.unpriced_items else ""
    if not b.exhausted:
        limits = [format_usd(b.max_cost_usd)] if b.max_cost_usd is not None else []
        limits += [f"{b.max_tokens:,} tokens"] if b.max_tokens is not None else []
        return (
            f"budget: spent {format_usd(b.spent_usd)} and {b.spent_tokens:,} tokens{unpriced} "
            f"of {' and '.join(limits)}"
        )
    flags = " ".join(
        flag
        for flag, limit in (("--max-cost USD", b.max_cost_usd), ("--max-tokens N", b.max_tokens))
        if limit is not None
    )
    left = (
        f"; {plural(len(report.not_started), 'item')} not started: `--resume RUN {flags}` "
        "with a larger budget completes them"
        if report.not_started
        else ""
    )
    return f"BUDGET RAN OUT: {b.reason}{unpriced}{left}"


def unpriced_line(report: RunReport) -> str | None:
    """The one warning for models without a price (None: every item priced)."""
    models = sorted({m for i in report.items if i.cost is not None for m in i.cost.unpriced})
    if not models:
        return None
    return (
        f"no price known for {', '.join(models)}: their items' cost_usd is null and costs "
        "are compared in tokens (give prices with --prices FILE)"
    )


def cost_line(s: FixtureSummary) -> str:
    """A fixture x model's cost per item and per resolved item: USD where every item has a
    price, tokens otherwise; ``(lower bound)`` when some item's usage is."""
    bound = " (lower bound)" if not s.usage_complete else ""
    usd = s.measures.get("cost_usd")
    if s.cost_per_resolved_usd is not None and usd is not None and usd.mean is not None:
        per = format_per_resolved(s.cost_per_resolved_usd, "usd")
        return f"{format_usd(usd.mean)} per item, {per}{bound}"
    tokens = s.measures.get("tokens_used")
    mean = tokens.mean if tokens is not None else None
    per = format_per_resolved(s.tokens_per_resolved, "tokens")
    return f"{format_amount(mean, 'tokens')} per item, {per}{bound}"


def sequential_line(s: FixtureSummary) -> str | None:
    """How a ``--trials auto`` cell ended, in one line (None: fixed trials)."""
    c = s.sequential
    if c is None:
        return None
    what = "difference from the baseline" if c.question == "regression" else "rate"
    bounds = (
        f"{what} in [{c.lower:+.2f}, {c.upper:+.2f}]"
        if c.question == "regression"
        else (f"{what} in [{format_pct(c.lower, 0)}, {format_pct(c.upper, 0)}]")
    )
    ran = f"{plural(c.launched, 'trial')} run"
    if c.stop_reason == "decided":
        head = f"{c.status} after {plural(c.decided_at or c.trials, 'trial')} ({ran})"
    elif c.stop_reason == "precise":
        head = f"rate known to the precision after {plural(c.decided_at or c.trials, 'trial')}"
    elif c.stop_reason == "cap":
        head = f"undecided at the cap of {c.max_trials} ({ran})"
    else:
        head = f"stopped before deciding ({ran})"
    text = f"trials auto: {head}; {bounds} (anytime-valid, alpha {c.alpha:.3g})"
    if c.fixed_trials is not None:
        saved = c.fixed_trials - c.launched
        text += (
            f"; a fixed design needs {plural(c.fixed_trials, 'trial')} per run for the same "
            f"power ({saved:+d} against this run)"
            if saved < 0
            else f"; a fixed design needs {plural(c.fixed_trials, 'trial')} per run for the "
            f"same power: {saved} saved"
        )
    return text


def cost_comparison_line(cost: CostComparison, against: str = "the baseline's") -> str:
    """The cost verdict in one line: ``cost: costlier, x2.10 the baseline's per item
    (USD), 95% CI ...`` (``against``: whose cost the ratio is of)."""
    o = cost.overall
    text = (
        f"cost: {o.verdict}, {format_ratio(o.ratio)} {against} per item "
        f"({unit_label(cost.unit)}), 95% CI {format_ratio_ci(o.ci)}, "
        f"threshold +{100 * cost.threshold:.0f}%"
    )
    if o.reason:
        text += f" ({o.reason})"
    return text + "".join(f"; {note}" for note in cost.notes)


def cost_text(item: ItemResult) -> str | None:
    """An item's cost in one line: the harness's price and where its prices came from,
    else the price the agent reported for itself, else why it is unknown (None: neither
    priced nor reported)."""
    c = item.cost
    usage = item.score.usage
    own = usage.agent_reported_cost_usd if usage is not None else None
    own_text = None if own is None else f"{format_usd(own)}, the agent's own price"
    if c is None or c.usd is None:
        if own_text is not None:
            why = f" (no price known to the harness for {', '.join(c.unpriced)})" if c else ""
            return f"cost: {own_text}{why}"
        return None if c is None else f"cost: unknown: no price known for {', '.join(c.unpriced)}"
    text = f"cost: {format_usd(c.usd)}" + ("" if c.complete else " (lower bound)")
    return (
        text
        + (f" [{'; '.join(c.detail)}]" if c.detail else "")
        + (f" ({c.note})" if c.note else "")
        # The agent's own figure beside the harness's only where it tells something more.
        + ("" if own is None or format_usd(own) == format_usd(c.usd) else f"; {own_text}")
    )


def usage_line(score: ItemScore) -> str | None:
    """What an item used, in one line: the four billed fields, parent and children where the
    agent splits them, and whether it is the whole bill (its price is :func:`cost_text`'s)."""
    usage = score.usage
    if usage is None:
        return None
    t = usage.total
    parts = [
        f"{t.total:,} tokens (input {t.input_tokens:,}, output {t.output_tokens:,}, "
        f"cache read {t.cache_read_tokens:,}, cache write {t.cache_write_tokens:,})"
    ]
    if usage.parent is not None and usage.children is not None:
        parts.append(f"parent {usage.parent.total:,}, children {usage.children.total:,}")
    parts.append("complete" if usage.complete else "LOWER BOUND: " + "; ".join(usage.gaps))
    return "usage: " + "; ".join(parts) + f" [{usage.source}]"


def efficiency_line(score: ItemScore) -> str | None:
    """How the swarm spent its work, in one line (figures the evidence cannot give are
    left out)."""
    eff = score.efficiency
    if eff is None:
        return None
    parts = []
    if eff.tokens_per_shard is not None:
        parts.append(f"{eff.tokens_per_shard:,.0f} tokens per shard")
    if eff.children_share is not None:
        parts.append(f"children {format_pct(eff.children_share, 0)} of tokens")
    if eff.spawn_overhead is not None:
        parts.append(
            f"{plural(eff.depth1_spawns, 'spawn')} for {plural(eff.shards, 'shard')} "
            f"({eff.spawn_overhead:.2f})"
        )
    if eff.peak_parallel_children is not None:
        parts.append(f"at most {plural(eff.peak_parallel_children, 'child', 'children')} at once")
    if eff.busy_over_wall is not None:
        parts.append(f"children's busy time {eff.busy_over_wall:.2f}x the parent's wall time")
    return "efficiency: " + "; ".join(parts) if parts else None


def _times(est: Estimate, what: str) -> str:
    """``2.7x the tokens [2.1, 3.3]``; ``the tokens n/a`` without a value."""
    if est.value is None:
        return f"{what} n/a"
    ci = f" [{est.ci[0]:.1f}, {est.ci[1]:.1f}]" if est.ci is not None else " [no interval]"
    return f"{est.value:.1f}x {what}{ci}"


def _points(value: float) -> str:
    return f"{round(100.0 * value) + 0:+d}"


def solo_lines(report: RunReport) -> list[str]:
    """One :func:`solo_line` per agent x model with twins (prefixed by it among several)."""
    rows = [o for o in report.overall if o.swarm_vs_solo is not None]
    several = len(rows) > 1
    return [
        (f"{condition_label(o.agent, o.model)}: " if several else "") + solo_line(o.swarm_vs_solo)
        for o in rows
        if o.swarm_vs_solo is not None
    ]


def solo_line(vs: SwarmVsSolo) -> str:
    """What the swarm is worth against its solo twin, in one line: ``the swarm: 3.1x
    faster [2.4, 3.9], 2.7x the tokens [2.1, 3.3], resolved +12 pp [+2, +22] (9 pairs)``.
    A speedup below 1 reads ``0.6x as fast``."""
    if not vs.pairs:
        left = ", ".join(f"{n} {why}" for why, n in vs.excluded.items() if n)
        return f"the swarm against {vs.solo_agent}: no pair to compare" + (
            f" ({left})" if left else ""
        )
    speed = vs.speedup
    faster = speed.value is None or speed.value >= 1
    parts = [
        _times(speed, "faster" if faster else "as fast"),
        _times(vs.tokens_ratio, "the tokens"),
    ]
    if vs.cost_ratio.value is not None:
        parts.append(_times(vs.cost_ratio, "the cost"))
    diff = vs.resolved_diff
    resolved = "resolved n/a" if diff.value is None else f"resolved {_points(diff.value)} pp"
    if diff.value is not None and diff.ci is not None:
        resolved += f" [{_points(diff.ci[0])}, {_points(diff.ci[1])}]"
    parts.append(resolved)
    dropped = sum(vs.excluded.values())
    note = f"{plural(vs.pairs, 'pair')}" + (
        "; left out: " + ", ".join(f"{n} {why}" for why, n in vs.excluded.items() if n)
        if dropped
        else ""
    )
    return f"the swarm: {', '.join(parts)} ({note})"


def _shift(before: Estimate | None, after: Estimate | None, fmt: Callable[[float], str]) -> str:
    def one(est: Estimate | None) -> str:
        return "n/a" if est is None or est.value is None else fmt(est.value)

    return f"{one(before)} -> {one(after)}"


def solo_shift_lines(cmp: Comparison) -> list[str]:
    """Each agent x model's swarm against its twin, baseline -> candidate: ``sim · sim/honest:
    speedup 3.1x -> 2.4x, tokens 2.7x -> 3.0x, resolved +12 pp -> +5 pp``."""
    lines = []
    for s in cmp.solo:
        b, c = s.baseline, s.candidate

        def get(vs: SwarmVsSolo | None, name: str) -> Estimate | None:
            return None if vs is None or not vs.pairs else getattr(vs, name)

        parts = [
            "speedup " + _shift(get(b, "speedup"), get(c, "speedup"), lambda v: f"{v:.1f}x"),
            "tokens "
            + _shift(get(b, "tokens_ratio"), get(c, "tokens_ratio"), lambda v: f"{v:.1f}x"),
            "cost " + _shift(get(b, "cost_ratio"), get(c, "cost_ratio"), lambda v: f"{v:.1f}x"),
            "resolved "
            + _shift(
                get(b, "resolved_diff"), get(c, "resolved_diff"), lambda v: f"{_points(v)} pp"
            ),
        ]
        lines.append(f"{condition_label(s.agent, s.model)}: {', '.join(parts)}")
    return lines

"""``report.md``: the run's summary in Markdown, the comparison and its gate, pass@k, and
every item that did not resolve with its reasons."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.model.agents import AgentsComparison
from harness.model.comparison import Comparison, CostComparison
from harness.model.provider_text import health_line, item_faults_line
from harness.model.report import RunReport
from harness.model.selftest import PLAY_PRICES
from harness.model.selftest_text import holds_text, selftest_headline, shown_rows
from harness.model.summary import FixtureSummary
from harness.model.text import (
    agents_reference_line,
    baseline_label,
    budget_line,
    comparison_sentences,
    condition_label,
    cost_comparison_line,
    cost_gate_line,
    cost_line,
    format_amount,
    format_ci,
    format_ci_pp,
    format_duration,
    format_pct,
    format_pp,
    format_ratio,
    format_ratio_ci,
    format_when,
    item_reasons,
    plural,
    sequential_line,
    several_agents,
    solo_lines,
    standing_cost_cells,
    unit_label,
    unpriced_line,
    verdict_line,
    versus_line,
)
from scorers.criteria import criterion_names

MD_FILE = "report.md"


def render_markdown(report: RunReport, run_dir: Path) -> str:
    if report.options.selftest:
        return _selftest_markdown(report, run_dir)
    lines = [
        f"# swarm-harness run {report.run_id}",
        "",
        f"**{verdict_line(report)}**",
        "",
        *[f"{line}\n" for line in solo_lines(report)],
        *_budget_first(report, run_dir),
        *_header(report),
        f"- items: {len(report.items)} ({report.count('resolved')} resolved, "
        f"{report.count('unresolved')} unresolved, {plural(report.count('error'), 'error')})"
        + (" — INTERRUPTED" if report.interrupted else ""),
    ]
    if report.options.origin:
        lines.append(
            f"- a re-run of the {plural(len(report.options.only_keys), 'item')} that failed "
            f"in run `{report.options.origin}`"
        )
    if report.not_started:
        lines.append(
            f"- not started: {len(report.not_started)} (`--resume {run_dir}` completes them)"
        )
    several = several_agents(report)
    for o in report.overall:
        lines.append(
            f"- {condition_label(o.agent, o.model, several)}: {format_pct(o.rate)} resolved, 95% CI {format_ci(o.ci)} "
            f"(mean over {plural(o.strata, 'fixture')}, n={o.n})"
        )
    if report.provider is not None:
        lines.append(f"- {health_line(report.provider)}")
    lines.extend(f"- note: {note}" for note in report.notes)
    unpriced = unpriced_line(report)
    if unpriced is not None:
        lines.append(f"- note: {unpriced}")
    budget = budget_line(report)
    if budget is not None and report.budget is not None and not report.budget.exhausted:
        lines.append(f"- {budget}")
    if report.agents is not None:
        lines += agents_markdown(report.agents)
    names = criterion_names()
    lines += [
        "",
        "## Per fixture",
        "",
        f"| fixture | {_cond_head(several)} | n | errors | resolved | rate | 95% CI | "
        + " | ".join(names)
        + " | mean tokens | cost per item, per resolved item |",
        f"|---|{_cond_rule(several)}|---|---|---|---|---|" + "---|" * len(names) + "---|---|",
    ]
    for s in report.summary:
        crit = " | ".join(format_pct(s.criteria[c].rate) for c in names)
        tokens = s.measures["tokens_used"].mean
        lines.append(
            f"| {s.fixture} | {_cond(s.agent, s.model, several)} | {s.n} | {s.errors} | {s.resolved} | "
            f"{format_pct(s.rate)} | {format_ci(s.ci)} | {crit} | "
            f"{'n/a' if tokens is None else f'{tokens:.0f}'} | {cost_line(s)} |"
        )
    lines += _sequential(report.summary, several)
    if report.comparison is not None:
        lines += comparison_markdown(report.comparison)
    if report.triage:
        lines += [
            "",
            "## How items failed",
            "",
            "| criterion | what | items | e.g. |",
            "|---|---|---|---|",
        ]
        for group in report.triage:
            lines.append(
                f"| {group.criterion} | {group.signature} | {len(group.keys)} | `{group.keys[0]}` |"
            )
    lines += _pass_at_k(report.summary, several)
    bad = [i for i in report.items if i.status != "resolved"]
    if bad:
        lines += ["", "## Unresolved and errored items", ""]
        for i in bad:
            reasons = item_reasons(i)
            lines.append(f"- `{i.key}` ({i.status}): {reasons[0]}")
            lines.extend(f"  - {reason}" for reason in reasons[1:])
            faults = item_faults_line(i)
            if faults:
                lines.append(f"  - {faults}")
            if i.facts.agent_error:
                lines.append(f"  - agent error: {i.facts.agent_error[:300]}")
            lines.append(f"  - item dir: `{run_dir / 'items' / i.item_dir}`")
    return "\n".join(lines) + "\n"


def _selftest_markdown(report: RunReport, run_dir: Path) -> str:
    """A selftest's page: its verdict and rows first; no rate (its scripts are meant to
    fail where they cheat) and no cost (its prices are play prices)."""
    opts = report.options
    when = format_when(report.started_at or report.created_at)
    took = "?" if report.duration_s is None else format_duration(report.duration_s)
    agents = ", ".join(f"{a.agent}{f' ({a.version})' if a.version else ''}" for a in opts.agents)
    tokens = sum(i.spent_tokens for i in report.items)
    lines = [
        f"# swarm-harness selftest {report.run_id}",
        "",
        f"**{selftest_headline(report)}**",
        "",
        f"- {'agents' if several_agents(report) else 'agent'}: {agents or opts.agent}",
        f"- fixtures: {', '.join(sorted({i.fixture for i in report.items})) or '?'}",
        f"- date: {when}; duration: {took}",
        f"- tokens: {tokens:,}; cost: {PLAY_PRICES}",
    ]
    if report.not_started:
        lines.append(f"- not started: {len(report.not_started)}")
    if report.provider is not None:
        lines.append(f"- {health_line(report.provider)}")
    lines.extend(f"- note: {note}" for note in report.notes)
    judged = report.selftest is not None
    lines += [
        "",
        "## Rows",
        "",
        "| agent | fixture | script | expected | actual | holds |",
        "|---|---|---|---|---|---|",
    ]
    rows = shown_rows(report)
    lines += [
        f"| {r.agent} | {r.fixture} | {r.script} | {r.expected} | {r.actual} | "
        f"{holds_text(r, judged)} |"
        for r in rows
    ]
    dirs = {i.key: run_dir / "items" / i.item_dir for i in report.items}
    bad = [r for r in rows if not r.holds]
    if bad:
        lines += ["", "## Rows that do not hold", ""]
        for r in bad:
            lines.append(f"- `{r.key}`: {'; '.join(r.why)}")
            if r.key in dirs:
                lines.append(f"  - item dir: `{dirs[r.key]}`")
    return "\n".join(lines) + "\n"


def _cond_head(with_agent: bool) -> str:
    """The header cell(s) naming a condition: ``model``, or ``agent | model``."""
    return "agent | model" if with_agent else "model"


def _cond_rule(with_agent: bool) -> str:
    return "---|---" if with_agent else "---"


def _cond(agent: str, model: str, with_agent: bool) -> str:
    return f"{agent} | {model}" if with_agent else model


def agents_markdown(agents: AgentsComparison) -> list[str]:
    """The agents side by side: a row per agent x model, then each agent against the
    reference with its per-fixture differences."""
    lines = [
        "",
        "## Agents side by side",
        "",
        agents_reference_line(agents, _code),
        "",
        "| agent | model | fixtures | n | errors | resolved | 95% CI | per item | per resolved "
        "item | tokens per resolved item | mean wall time |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in agents.standings:
        lines.append(
            f"| {s.agent} | {s.model} | {s.fixtures} | {s.n} | {s.errors} | "
            f"{format_pct(s.rate)} | {format_ci(s.ci)} | "
            + " | ".join(standing_cost_cells(s))
            + " |"
        )
    for v in agents.versus:
        lines += ["", f"### {v.agent} against {v.reference}", "", versus_line(v), ""]
        lines += _fixture_rows(v.comparison)
    return lines


def _sequential(summary: Sequence[FixtureSummary], several: bool = False) -> list[str]:
    """``--trials auto``: trials used per cell, why it stopped, and what a fixed design of
    the same power would have needed."""
    rows = [s for s in summary if s.sequential is not None]
    if not rows:
        return []
    lines = [
        "",
        "## Trials auto",
        "",
        f"| fixture | {_cond_head(several)} | trials run | stop reason | how it ended |",
        f"|---|{_cond_rule(several)}|---|---|---|",
    ]
    for s in rows:
        assert s.sequential is not None
        line = sequential_line(s) or ""
        lines.append(
            f"| {s.fixture} | {_cond(s.agent, s.model, several)} | {s.sequential.launched} | {s.stop_reason} | "
            f"{line.removeprefix('trials auto: ')} |"
        )
    return lines


def _budget_first(report: RunReport, run_dir: Path) -> list[str]:
    """A budget that ran out is said before anything else: the run stopped early."""
    line = budget_line(report)
    if line is None or report.budget is None or not report.budget.exhausted:
        return []
    return [f"**{line.replace('RUN', str(run_dir))}**", ""]


def _header(report: RunReport) -> list[str]:
    """Who ran what, when and for how long."""
    opts = report.options
    models = ", ".join(opts.models) or "?"
    when = format_when(report.started_at or report.created_at)
    took = "?" if report.duration_s is None else format_duration(report.duration_s)
    if several_agents(report):
        agents = "; ".join(
            f"{a.agent}{f' ({a.version})' if a.version else ''}: {', '.join(a.models)}"
            for a in opts.agents
        )
        who = f"- agents: {agents}"
    else:
        kind, _, behaviour = opts.agent.partition(":")
        version = f" ({opts.agent_version})" if opts.agent_version else ""
        who = f"- agent: {kind if behaviour else opts.agent}{version}" + (
            f", behaviour: {behaviour}" if behaviour else ""
        )
    return [
        who,
        f"- models: {models}; trials: {opts.trials}; seed: {opts.seed}",
        f"- date: {when}; duration: {took}",
    ]


def _pass_at_k(summary: Sequence[FixtureSummary], several: bool = False) -> list[str]:
    """pass@k per fixture x model (unbiased; the chance that at least one of k trials resolves)."""
    rows = [s for s in summary if s.pass_at_k]
    if not rows or max(len(s.pass_at_k) for s in rows) < 2:
        return []
    ks = sorted({int(k) for s in rows for k in s.pass_at_k})
    lines = [
        "",
        "## pass@k",
        "",
        f"| fixture | {_cond_head(several)} | " + " | ".join(f"pass@{k}" for k in ks) + " |",
        f"|---|{_cond_rule(several)}|" + "---|" * len(ks),
    ]
    for s in rows:
        cells = [format_pct(s.pass_at_k.get(str(k))) for k in ks]
        lines.append(
            f"| {s.fixture} | {_cond(s.agent, s.model, several)} | " + " | ".join(cells) + " |"
        )
    return lines


def _code(text: str) -> str:
    return f"`{text}`"


def _strong(text: str) -> str:
    return f"**{text}**"


def comparison_markdown(cmp: Comparison) -> list[str]:
    lines = ["", f"## Comparison with {baseline_label(cmp)}", "", f"Baseline: `{cmp.baseline}`", ""]
    lines += comparison_sentences(cmp, _code, _strong)
    lines += ["", *_fixture_rows(cmp)]
    if cmp.cost is not None:
        lines += _cost_comparison(cmp.cost)
    return lines


def _fixture_rows(cmp: Comparison) -> list[str]:
    """A comparison's table: a row per fixture x model (x agent, where it is a dimension)."""
    by_agent = any(f.agent for f in cmp.fixtures)
    lines = [
        f"| fixture | {_cond_head(by_agent)} | baseline | candidate | Δ | 95% CI | verdict | "
        "trials for 80% power |",
        f"|---|{_cond_rule(by_agent)}|---|---|---|---|---|---|",
    ]
    for f in cmp.fixtures:
        lines.append(
            f"| {f.fixture} | {_cond(f.agent, f.model, by_agent)} | {format_pct(f.baseline_rate)} | "
            f"{format_pct(f.candidate_rate)} | {format_pp(f.delta)} | {format_ci_pp(f.ci)} | "
            f"{f.verdict} | {f.trials_for_power or ''} |"
        )
    return lines


def _cost_comparison(cost: CostComparison) -> list[str]:
    """The cost verdict and its gate, then the per-fixture ratios."""
    unit = unit_label(cost.unit)
    by_agent = any(r.agent for r in cost.fixtures)
    lines = [
        "",
        f"### Cost per item ({unit})",
        "",
        cost_comparison_line(cost),
        "",
        cost_gate_line(cost, _code),
        "",
        f"| fixture | {_cond_head(by_agent)} | baseline mean | candidate mean | ratio | 95% CI | "
        "verdict |",
        f"|---|{_cond_rule(by_agent)}|---|---|---|---|---|",
    ]
    for r in cost.fixtures:
        lines.append(
            f"| {r.fixture} | {_cond(r.agent, r.model, by_agent)} | {format_amount(r.mean_base, cost.unit)} | "
            f"{format_amount(r.mean_cand, cost.unit)} | {format_ratio(r.ratio)} | "
            f"{format_ratio_ci(r.ci)} | {r.verdict}{f' ({r.reason})' if r.reason else ''} |"
        )
    return lines

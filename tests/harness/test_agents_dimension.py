"""The agent as a dimension beside the model: which models each agent runs, item keys,
``--agent-bin`` per agent, how two runs' cells pair, and the agents side by side."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from model_builders import make_item

from harness.agents import parse_agent, parse_agents
from harness.errors import UsageError
from harness.fixtures import load_fixture
from harness.model.item import ItemCost
from harness.plan import RunConfig, agent_models, build_plan, effective_models
from harness.report.charts import cost_view
from harness.stats.agents import agents_comparison, agents_in
from harness.stats.compare import compare
from harness.stats.per_resolved import per_resolved
from harness.stats.summaries import overall

TINY = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny"


def config(*agents: str, models: tuple[str, ...] = ()) -> RunConfig:
    return RunConfig(fixtures=(str(TINY),), models=models, agents=parse_agents(agents))


def labelled(cfg: RunConfig) -> list[tuple[str, tuple[str, ...]]]:
    return [(agent.label(), models) for agent, models in agent_models(cfg)]


# --- which models each agent runs --------------------------------------------------------


def test_one_agent_runs_every_model_as_before() -> None:
    cfg = config("prime-agent", models=("p/a", "p/b"))
    assert labelled(cfg) == [("prime-agent", ("p/a", "p/b"))]
    assert labelled(config("sim:no-spawn")) == [("sim:no-spawn", ("sim/no-spawn",))]
    with pytest.raises(UsageError, match="--model is required"):
        agent_models(config("claude-code"))


def test_among_several_the_sim_keeps_its_own_models_and_real_agents_the_others() -> None:
    cfg = config("claude-code", "sim", "opencode", models=("anthropic/m",))
    assert labelled(cfg) == [
        ("claude-code", ("anthropic/m",)),
        ("sim", ("sim/honest",)),
        ("opencode", ("anthropic/m",)),
    ]
    cfg.validate()  # the sim is never asked to run a real model's name
    with_sim_models = config("sim", "claude-code", models=("anthropic/m", "sim/flaky=0.5"))
    assert labelled(with_sim_models) == [
        ("sim", ("sim/flaky=0.5",)),
        ("claude-code", ("anthropic/m",)),
    ]
    assert effective_models(with_sim_models) == ("sim/flaky=0.5", "anthropic/m")


def test_a_real_agent_among_several_still_needs_a_model() -> None:
    with pytest.raises(UsageError, match="--agent claude-code: no model for it"):
        agent_models(config("sim", "claude-code"))


def test_the_same_agent_twice_is_refused() -> None:
    with pytest.raises(UsageError, match="--agent given twice"):
        config("sim", "sim").validate()
    config("sim", "sim:flaky=0.5").validate()  # two behaviours are two agents


# --- keys ---------------------------------------------------------------------------------


def test_keys_name_the_agent_only_in_a_run_of_several() -> None:
    fixture = load_fixture(TINY)
    one = build_plan([fixture], [(parse_agent("sim"), ("sim/honest",))], 2)
    assert [w.key for w in one] == ["tiny:sim/honest:1", "tiny:sim/honest:2"]
    several = build_plan(
        [fixture],
        [(parse_agent("sim"), ("sim/honest",)), (parse_agent("sim:no-spawn"), ("sim/honest",))],
        1,
    )
    assert [w.key for w in several] == ["tiny:sim:sim/honest:1", "tiny:sim:no-spawn:sim/honest:1"]
    assert len({w.dir_name for w in several}) == 2


def test_several_agents_take_turns_trial_by_trial() -> None:
    """What drifts during a run falls on every agent alike: the plan alternates agents
    within each trial, in --agent order."""
    fixture = load_fixture(TINY)
    plan = build_plan(
        [fixture],
        [(parse_agent("sim:no-spawn"), ("sim/a", "sim/b")), (parse_agent("sim"), ("sim/a",))],
        2,
    )
    assert [(w.trial, w.agent.label(), w.model) for w in plan] == [
        (1, "sim:no-spawn", "sim/a"), (1, "sim:no-spawn", "sim/b"), (1, "sim", "sim/a"),
        (2, "sim:no-spawn", "sim/a"), (2, "sim:no-spawn", "sim/b"), (2, "sim", "sim/a"),
    ]  # fmt: skip


# --- --agent-bin per agent ----------------------------------------------------------------


def test_agent_bin_is_given_per_agent() -> None:
    (one,) = parse_agents(["prime-agent"], ["/opt/pa"])
    assert one.binary == "/opt/pa"
    cc, oc = parse_agents(["claude-code", "opencode"], ["opencode=/x/oc", "claude-code=/y/cc"])
    assert (cc.binary, oc.binary) == ("/y/cc", "/x/oc")
    # Unnamed agents keep their own binary.
    cc, pa = parse_agents(["claude-code", "prime-agent"], ["prime-agent=/p"])
    assert (cc.binary, pa.binary) == ("claude", "/p")


def test_one_binary_serves_every_drive_of_an_agent() -> None:
    """``prime-agent=PATH`` is the whole value of one --agent and the name of the other:
    both drives run that binary; a whole value's own --agent-bin wins over its name's."""
    one, res = parse_agents(["prime-agent", "prime-agent:resident"], ["prime-agent=/p"])
    assert (one.binary, res.binary) == ("/p", "/p")
    assert (one.label(), res.label()) == ("prime-agent", "prime-agent:resident")
    one, res = parse_agents(
        ["prime-agent", "prime-agent:resident"],
        ["prime-agent:resident=/new", "prime-agent=/old"],
    )
    assert (one.binary, res.binary) == ("/old", "/new")
    with pytest.raises(UsageError, match="two binaries"):
        parse_agents(["prime-agent", "prime-agent:resident"], ["prime-agent=/a", "prime-agent=/b"])


def test_agent_bin_is_refused_when_it_is_unclear_whose_it_is() -> None:
    with pytest.raises(UsageError, match="name the one it is for"):
        parse_agents(["claude-code", "opencode"], ["/x/oc"])
    with pytest.raises(UsageError, match="two binaries"):
        parse_agents(["claude-code", "opencode"], ["claude-code=/a", "claude-code=/b"])
    with pytest.raises(UsageError, match="runs no other binary"):
        parse_agents(["sim", "claude-code"], ["sim=/x"])


def test_a_path_with_an_equals_sign_belongs_to_the_only_agent() -> None:
    (one,) = parse_agents(["prime-agent"], ["/opt/a=b/pa"])
    assert one.binary == "/opt/a=b/pa"


# --- pairing two runs' cells ------------------------------------------------------------------


def items(agent: str, outcomes: list[bool], fixture: str = "fx", model: str = "p/m") -> list:  # type: ignore[type-arg]
    return [
        make_item(fixture, t, ok, model=model, agent=agent)
        for t, ok in enumerate(outcomes, start=1)
    ]


def test_runs_of_one_agent_each_pair_whatever_the_agents_are_called() -> None:
    cmp = compare(items("a", [True] * 4), items("b", [False] * 4), 0.05, "base")
    (fixture,) = cmp.fixtures
    assert fixture.agent == "" and fixture.delta == -1.0
    assert cmp.missing_in_baseline == cmp.missing_in_candidate == ()


def test_runs_of_several_agents_pair_by_agent() -> None:
    base = items("a", [True] * 4) + items("b", [True] * 4)
    cand = items("a", [True] * 4) + items("b", [False] * 4) + items("c", [True] * 4)
    cmp = compare(base, cand, 0.05, "base")
    by_agent = {f.agent: f for f in cmp.fixtures}
    assert set(by_agent) == {"a", "b"}
    assert by_agent["a"].delta == 0.0 and by_agent["b"].delta == -1.0
    assert [m.label() for m in cmp.missing_in_baseline] == ["fx:c:p/m (not run by the baseline)"]
    assert not cmp.gate.passed  # a cell only one run scored is no pass
    assert cmp.cost is not None and {r.agent for r in cmp.cost.fixtures} == {"a", "b"}


# --- agents side by side ------------------------------------------------------------------


def priced(item, usd: float):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    return replace(item, cost=ItemCost(usd, "price file", (), (), True))


def test_one_agent_has_no_side_by_side() -> None:
    assert agents_comparison(items("a", [True, False])) is None


def test_standings_are_the_agents_own_figures() -> None:
    a = [priced(i, 1.0 + n) for n, i in enumerate(items("a", [True, True, False]))]  # $1 $2 $3
    b = [priced(i, 0.5) for i in items("b", [True, False, False])]
    b += [make_item("fx", 4, False, model="p/m", agent="b", status="error")]
    side = agents_comparison([*b, *a], order=["a", "b"])
    assert side is not None
    assert side.reference == "a" and side.agents == ("a", "b")
    sa, sb = side.standings
    assert (sa.agent, sa.n, sa.resolved, sa.errors, sa.fixtures) == ("a", 3, 2, 0, 1)
    assert sa.rate == pytest.approx(2 / 3)
    assert sa.mean_cost_usd == pytest.approx(2.0)
    # The cost per resolved item is the one per_resolved gives the agent's scored items,
    # interval and all (the figure the cost chart plots).
    assert sa.cost_per_resolved_usd == per_resolved([1.0, 2.0, 3.0], [True, True, False])
    assert sa.cost_per_resolved_usd.value == pytest.approx(6.0 / 2)
    tokens_a = [i.score.tokens_used for i in a]
    assert sa.mean_tokens == pytest.approx(sum(tokens_a) / 3)
    assert sa.tokens_per_resolved == per_resolved(tokens_a, [True, True, False])
    assert (sb.n, sb.resolved, sb.errors) == (3, 1, 1)
    assert sb.cost_per_resolved_usd is not None
    assert sb.cost_per_resolved_usd.value == pytest.approx(1.5)
    assert sb.mean_wall_time_s == pytest.approx(sum(i.facts.wall_time_s for i in b[:3]) / 3)
    (versus,) = side.versus
    assert (versus.agent, versus.reference) == ("b", "a")
    # The same comparison as the reference's run against the other's.
    assert versus.comparison == compare(a, b, 0.05, "agent a", None)
    assert versus.comparison.overall.delta == pytest.approx(1 / 3 - 2 / 3)


def test_the_cost_chart_plots_the_standings_figures() -> None:
    """The chart's point for an agent x model and its standing are one figure with one
    interval, USD and tokens alike (report.html draws one, the agents table shows the
    other)."""
    a = [priced(i, 1.0 + n) for n, i in enumerate(items("a", [True, True, False]))]
    b = [priced(i, 0.5 + n / 10) for n, i in enumerate(items("b", [True, True, True]))]
    run = [*a, *b]
    side = agents_comparison(run, order=["a", "b"])
    assert side is not None
    points = {m.label: m.per_resolved for m in cost_view(run, overall(run), True).models}
    for s in side.standings:
        assert s.cost_per_resolved_usd is not None and s.cost_per_resolved_usd.ci is not None
        assert points[f"{s.agent} · {s.model}"] == s.cost_per_resolved_usd
    unpriced = [*items("a", [True, True, False]), *items("b", [True, True, True])]
    side = agents_comparison(unpriced, order=["a", "b"])
    assert side is not None
    view = cost_view(unpriced, overall(unpriced), True)
    assert view.unit == "tokens"
    points = {m.label: m.per_resolved for m in view.models}
    for s in side.standings:
        assert points[f"{s.agent} · {s.model}"] == s.tokens_per_resolved


def test_an_unpriced_item_leaves_the_agent_without_a_usd_figure() -> None:
    a = [priced(i, 1.0) for i in items("a", [True, True])]
    b = [priced(items("b", [True])[0], 1.0), *items("b", [True])[1:], items("b", [True, True])[1]]
    side = agents_comparison([*a, *b])
    assert side is not None
    sb = side.standings[1]
    assert sb.mean_cost_usd is None and sb.cost_per_resolved_usd is None
    tokens = sb.tokens_per_resolved
    assert tokens is not None and tokens.value is not None and math.isfinite(tokens.value)


def test_another_reference_and_a_wrong_one() -> None:
    both = items("a", [True]) + items("b", [False])
    side = agents_comparison(both, order=["a", "b"], reference="b")
    assert side is not None and side.reference == "b"
    assert [v.agent for v in side.versus] == ["a"]
    with pytest.raises(UsageError, match="not an agent of this run"):
        agents_comparison(both, reference="zz")


def test_agents_keep_the_run_order_then_any_other_by_name() -> None:
    mixed = items("z", [True]) + items("m", [True]) + items("a", [True])
    assert agents_in(mixed, ["m"]) == ("m", "a", "z")


def test_harness_yaml_names_one_agent_or_several(tmp_path: Path) -> None:
    from harness.cli.config import load_default_map

    one = tmp_path / "one.yaml"
    one.write_text("run:\n  agent: sim\n  agent-bin: /x\n", encoding="utf-8")
    assert load_default_map(one) == {"run": {"agents": ["sim"], "agent_bins": ["/x"]}}
    several = tmp_path / "several.yaml"
    several.write_text("run:\n  agent: [claude-code, opencode]\n", encoding="utf-8")
    assert load_default_map(several) == {"run": {"agents": ["claude-code", "opencode"]}}

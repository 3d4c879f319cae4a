"""``selftest``: every scripted behaviour through the normal run path, against expectations.

A scripted model server (any object with the :class:`ModelServer` shape; the CLI hands in
``scripted_model``'s) plays each behaviour through the real agent CLI. Each behaviour is one
model id, so one ordinary run (same launch, collection and scoring as ``run``) covers them
all; each item's agent home gets a ``models.json`` pointing at the server. A row holds when
the item's status is the expected one, exactly the expected criteria failed, and the tokens
the harness counted are what the server billed for the item (no more than it, where the
item's usage is marked a lower bound).

With ``solo``, each item has its solo twin beside it (``run --solo``): whatever its script,
the server plays a solo parent there, so the twin's row holds when it is resolved under the
solo rubric with no subagent started, and its tokens and cost are what the server billed
for the twin. Item and twin play the same model; the server tells their requests apart by
the solo task they carry (its ``arm``), and bills each apart.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from harness.agents import adapter_class
from harness.agents.base import AgentAdapter
from harness.errors import HarnessError, UsageError, did_you_mean
from harness.fixtures import load_fixture
from harness.fixtures.lookup import expand_fixture_names, fixture_roots
from harness.item.scoring import manifest_dict
from harness.model.item import ItemStatus
from harness.model.report import RunReport
from harness.model.selftest import (
    SCRIPTED_PRICES,
    SelftestCheck,
    SelftestRowVerdict,
    SelftestVerdict,
)
from harness.model.text import format_usd
from harness.plan import RunConfig
from harness.pricing import PriceTable
from harness.report.columns import WIDTH, paragraph, table
from harness.report.progress import Progress
from harness.run.execute import execute_run
from harness.run.preflight import require_agent
from scorers.verdict import Arm

#: A scripted run finishes in well under a minute; this only stops a wedged agent.
SELFTEST_TIMEOUT_S = 300.0
#: A scripted server's faults pass as soon as their plan says: no need to wait long.
SELFTEST_RETRY_BACKOFF_S = 1.0
DEFAULT_FIXTURES = ("json-events",)


class ModelServer(Protocol):
    """What selftest needs of a model server: where it is and what it served, per model
    API (the agents of one selftest share it)."""

    @property
    def provider(self) -> str: ...

    @property
    def base_url(self) -> str: ...

    def models_json(self) -> dict[str, Any]: ...

    def requests_served(
        self,
        model: str | None = None,
        fixture: str | None = None,
        api: str | None = None,
        *,
        arm: Arm | None = None,
    ) -> int: ...

    def billed(
        self,
        model: str | None = None,
        fixture: str | None = None,
        caller: str | None = None,
        api: str | None = None,
        *,
        arm: Arm | None = None,
    ) -> Billed: ...

    @property
    def prices_per_mtok(self) -> Mapping[str, float]: ...

    def faults_served(
        self,
        model: str | None = None,
        fixture: str | None = None,
        api: str | None = None,
        *,
        arm: Arm | None = None,
    ) -> int: ...


class Billed(Protocol):
    """What a server billed: its tokens in total, their price and how many requests."""

    @property
    def total(self) -> int: ...

    @property
    def usd(self) -> float: ...

    @property
    def requests(self) -> int: ...


@dataclass(frozen=True)
class SelftestCase:
    """One scripted behaviour and the verdict the rubric must reach for it."""

    script: str
    expected_status: ItemStatus
    expected_failing: tuple[str, ...] = ()
    #: Criteria whose outcome depends on the product's own timing (e.g. whether a child torn
    #: down at exit had written its session yet): they may fail or pass.
    may_fail: tuple[str, ...] = ()
    #: Played only on edit fixtures (the script is about who changes the repository).
    edit_only: bool = False
    #: Criteria that also fail when the script plays on an edit fixture.
    edit_failing: tuple[str, ...] = ()
    #: The script's solo twin (``--solo``): the server plays a solo parent whatever the
    #: script, which must be resolved with no subagent started.
    solo: bool = False

    @property
    def label(self) -> str:
        """How the table and the report name the case: ``honest``, ``honest (solo)``."""
        return f"{self.script} (solo)" if self.solo else self.script

    def twin(self) -> SelftestCase:
        """The case of this script's solo twin."""
        return SelftestCase(self.script, "resolved", solo=True)

    def on(self, kind: str) -> SelftestCase:
        """The case as an item of a fixture of ``kind`` (``read``, ``edit``) must be judged."""
        if kind == "edit" and self.edit_failing and not self.solo:
            failing = tuple(dict.fromkeys((*self.expected_failing, *self.edit_failing)))
            return replace(self, expected_failing=failing)
        return self


@dataclass(frozen=True)
class SelftestRow:
    fixture: str
    case: SelftestCase
    status: ItemStatus
    failing: tuple[str, ...]
    error: str | None
    #: Assistant turns of the parent as the harness counted them, and the model requests
    #: the server answered for this item (parent, children and the product's internal calls).
    turns: int
    server_requests: int
    item_dir: str
    #: Tokens the harness counted for the item, what the server billed for it, and whether
    #: the item's usage is the whole bill (else a lower bound, never above the bill).
    tokens: int = 0
    billed: int = 0
    usage_complete: bool = True
    #: The item's cost as the harness priced it (at the server's prices), and the bill's.
    cost_usd: float | None = None
    billed_usd: float = 0.0
    #: The agent that ran it (its label).
    agent: str = ""
    #: Requests that failed at the provider as the harness counted them (every attempt's),
    #: the requests the server's fault plan failed for the item, and its attempts.
    faults: int = 0
    faults_served: int = 0
    attempts: int = 1
    #: The item's key in the run.
    key: str = ""
    #: Subagents the item's parent started (depth-1 spawns, as scored): a solo twin's must
    #: be none.
    spawns: int = 0

    @property
    def verdict_ok(self) -> bool:
        failing, must = set(self.failing), set(self.case.expected_failing)
        if self.case.solo and self.spawns:
            return False  # the solo arm delegated
        return self.status == self.case.expected_status and must <= failing <= must | set(
            self.case.may_fail
        )

    @property
    def tokens_ok(self) -> bool:
        if self.status == "error":
            return True  # an errored item is not scored: its tokens are not reported
        return self.tokens == self.billed if self.usage_complete else self.tokens <= self.billed

    @property
    def cost_ok(self) -> bool:
        if self.status == "error":
            return True
        if self.cost_usd is None:
            return False  # every scripted model has a price: an unpriced item is a bug
        if self.usage_complete:
            return math.isclose(self.cost_usd, self.billed_usd, rel_tol=1e-9, abs_tol=1e-12)
        return self.cost_usd <= self.billed_usd * (1 + 1e-9)

    @property
    def faults_ok(self) -> bool:
        """Never a fault the server did not serve; some seen when it served any (a client
        may leave the last failure of its run unrecorded, so fewer may be seen)."""
        return self.faults <= self.faults_served and (self.faults > 0) == (self.faults_served > 0)

    @property
    def ok(self) -> bool:
        return self.verdict_ok and self.tokens_ok and self.cost_ok and self.faults_ok

    def verdict(self) -> SelftestRowVerdict:
        """The row as the report keeps it: what did not hold, in words; a price only as a
        figure of play prices, never as money."""
        expected = _expected(self.case)
        actual = _actual(self)
        failed: list[SelftestCheck] = []
        why: list[str] = []
        if not self.verdict_ok:
            failed.append("verdict")
            why.append(f"verdict: expected {expected}, got {actual}")
        if not self.tokens_ok:
            failed.append("tokens")
            why.append(f"tokens: {self.tokens} counted, {self.billed} billed")
        if not self.cost_ok:
            failed.append("cost")
            priced = "unpriced" if self.cost_usd is None else f"{self.cost_usd:.6f}"
            why.append(f"cost at play prices: {priced} priced, {self.billed_usd:.6f} billed")
        if not self.faults_ok:
            failed.append("faults")
            why.append(f"faults: {self.faults} counted, {self.faults_served} served")
        return SelftestRowVerdict(
            key=self.key,
            agent=self.agent,
            fixture=self.fixture,
            script=self.case.label,
            expected=expected,
            actual=actual,
            failed=tuple(failed),
            why=tuple(why),
        )


@dataclass(frozen=True)
class SelftestOutcome:
    rows: tuple[SelftestRow, ...]
    run_dir: Path
    #: The run's agents, in ``--agent`` order.
    agents: tuple[str, ...] = ()
    #: What each agent's binary said to ``--version`` (None: a stand-in), in that order.
    versions: tuple[str | None, ...] = ()
    #: Rows planned that never ran (the run was interrupted): a selftest of them fails.
    not_run: int = 0

    @property
    def ok(self) -> bool:
        return bool(self.rows) and all(r.ok for r in self.rows) and not self.not_run


def fixture_manifests(fixtures: Sequence[str], roots: Sequence[Path] = ()) -> list[dict[str, Any]]:
    """The manifests (answer keys) of the named fixtures, for the model server's oracle."""
    names = expand_fixture_names(fixtures, roots or fixture_roots())
    return [manifest_dict(load_fixture(path).manifest) for path in names]


def agent_binary(agent: str, explicit: str | None) -> str | None:
    """``--agent-bin``, else the variable the agent's adapter names (the tests and CI export
    it after installing the pinned client), else None (the adapter's own name on PATH)."""
    var = adapter_class(agent.partition(":")[0]).binary_env
    return explicit or (os.environ.get(var) if var else None) or None


def scripts_for(agent: AgentAdapter) -> Mapping[str, Any]:
    """The scripted behaviours for the model API this agent speaks."""
    from scripted_model import SCRIPTS_BY_API

    if agent.model_api not in SCRIPTS_BY_API:
        raise UsageError(f"selftest: {agent.name} talks to no model API the server scripts")
    return SCRIPTS_BY_API[agent.model_api]


def cases_for(agent: AgentAdapter, edit: bool = False) -> list[SelftestCase]:
    """The agent's scripted behaviours as selftest cases (what each must be judged, under
    the agent's drive); the
    edit-only ones only when ``edit`` (every fixture of the selftest is an edit fixture:
    one run plays every script on every fixture). Each item is judged as its fixture's kind
    asks (:meth:`SelftestCase.on`)."""
    cases = []
    for s in scripts_for(agent).values():
        if s.selftest:
            status, failing = s.under(agent.drive)
            cases.append(
                SelftestCase(s.name, status, failing, s.may_fail, s.edit_only, s.edit_failing)
            )
    return [c for c in cases if edit or not c.edit_only]


def fixture_kinds(fixtures: Sequence[str], roots: Sequence[Path] = ()) -> dict[str, str]:
    """Each named fixture's kind (``read``, ``edit``), by its manifest name."""
    names = expand_fixture_names(fixtures, roots or fixture_roots())
    manifests = [load_fixture(path).manifest for path in names]
    return {m.name: m.kind for m in manifests}


def edit_fixtures_only(fixtures: Sequence[str], roots: Sequence[Path] = ()) -> bool:
    """Whether every named fixture is an edit fixture (``kind: "edit"``)."""
    kinds = fixture_kinds(fixtures, roots)
    return bool(kinds) and all(kind == "edit" for kind in kinds.values())


def shared_cases(
    agents: Sequence[AgentAdapter], edit: bool = False
) -> tuple[tuple[str, ...], dict[tuple[str, str], SelftestCase]]:
    """The scripts every agent has (in the first agent's order; the edit-only ones only
    when ``edit``), and each agent's case for them by (agent label, script): several agents
    run the same models, one per script."""
    per_agent = {a.label(): {c.script: c for c in cases_for(a, edit)} for a in agents}
    first = per_agent[agents[0].label()]
    common = tuple(s for s in first if all(s in mine for mine in per_agent.values()))
    if not common:
        raise UsageError(
            "selftest: these agents share no scripted behaviour: "
            + ", ".join(a.label() for a in agents)
        )
    cases = {(label, s): mine[s] for label, mine in per_agent.items() for s in common}
    return common, cases


def scripted_env(server: ModelServer, agents: Sequence[AgentAdapter], home: Path) -> dict[str, str]:
    """Every agent pointed at the server (their configuration written into ``home``); the
    variables they need, refused when two agents need one variable set two ways."""
    env: dict[str, str] = {}
    for agent in agents:
        for name, value in agent.scripted_endpoint(
            server.base_url, server.models_json(), home, tuple(scripts_for(agent))
        ).items():
            if env.setdefault(name, value) != value:
                raise UsageError(f"selftest: the agents need {name} set two ways")
    return env


def run_selftest(
    server: ModelServer,
    agents: Sequence[AgentAdapter],
    fixtures: Sequence[str] = DEFAULT_FIXTURES,
    concurrency: int = 1,
    runs_dir: Path = Path("runs"),
    timeout_s: float = SELFTEST_TIMEOUT_S,
    progress: Progress | None = None,
    retries: int = 2,
    retry_backoff_s: float = SELFTEST_RETRY_BACKOFF_S,
    scripts: Sequence[str] = (),
    solo: bool = False,
) -> SelftestOutcome:
    """Run every script (or only ``scripts``) on every fixture with each real agent, in one
    run (the agent a dimension of it when there are several), and compare the verdicts and
    the bills; with ``solo``, each item's solo twin too."""
    kinds = fixture_kinds(fixtures)
    edit = all(kind == "edit" for kind in kinds.values()) and bool(kinds)
    shared, cases = shared_cases(agents, edit)
    unknown = [s for s in scripts if s not in shared]
    if unknown and not edit and unknown[0] in shared_cases(agents, edit=True)[0]:
        raise UsageError(
            f'--script {unknown[0]}: plays only on edit fixtures (kind "edit"), and '
            + ", ".join(fixtures)
            + " are not all edit fixtures"
        )
    if unknown:
        raise UsageError(
            f"--script {unknown[0]}: not a script of "
            + " and ".join(a.label() for a in agents)
            + did_you_mean(unknown[0], shared)
            + f" (scripts: {', '.join(shared)})"
        )
    for agent in agents:  # rows of "agent could not start" tell nothing a line would not
        require_agent(agent)
    scripts = tuple(s for s in shared if s in scripts) if scripts else shared
    models = tuple(f"{server.provider}/{script}" for script in scripts)
    # Each script is a model the server charges for at its own prices; the agent may name it
    # with or without the provider (the table's lookup tries both).
    prices = PriceTable.from_mapping(
        {script: dict(server.prices_per_mtok) for script in scripts}, SCRIPTED_PRICES
    )
    home = Path(tempfile.mkdtemp(prefix="swh-selftest-home-"))
    try:
        env = scripted_env(server, agents, home)
        config = RunConfig(
            fixtures=tuple(fixtures),
            models=models,
            agents=tuple(agents),
            concurrency=concurrency,
            timeout_s=timeout_s,
            runs_dir=runs_dir,
            agent_home_source=home,
            extra_env=tuple(sorted(env.items())),
            prices=prices,
            retries=retries,
            retry_backoff_s=retry_backoff_s,
            max_provider_errors=0,  # a fault plan is the point: every row runs
            selftest=True,
            solo=solo,
        )
        outcome = execute_run(config, progress)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    # Each item's agent (its label, a twin's with +solo) -> the agent it is of, and its arm.
    of: dict[str, tuple[AgentAdapter, Arm]] = {a.label(): (a, "swarm") for a in agents}
    of |= {a.solo_twin().label(): (a, "solo") for a in agents}
    rows = []
    one_fixture = len({item.fixture for item in outcome.report.items}) == 1
    for item in outcome.report.items:
        script = item.model.removeprefix(f"{server.provider}/")
        agent, arm = of[item.agent]
        case = cases[(agent.label(), script)]
        case = (case.twin() if arm == "solo" else case).on(kinds.get(item.fixture, "read"))
        api = agent.model_api
        # With one fixture, everything billed to the item's model by its agent's API on its
        # arm is the item's (the client's internal calls name no fixture); with several, the
        # fixture's. An item and its solo twin play one model: the arm keeps them apart.
        fixture = None if one_fixture else item.fixture
        bill = server.billed(script, fixture, api=api, arm=arm)
        usage = item.score.usage
        rows.append(
            SelftestRow(
                fixture=item.fixture,
                case=case,
                status=item.status,
                failing=item.failed_criteria,
                error=item.facts.error,
                turns=item.score.turns,
                server_requests=server.requests_served(script, item.fixture, api, arm=arm),
                item_dir=str(outcome.run_dir / "items" / item.item_dir),
                tokens=item.spent_tokens,
                billed=bill.total,
                usage_complete=usage is not None and usage.complete,
                cost_usd=item.spent_usd,
                billed_usd=bill.usd,
                agent=item.agent,
                faults=item.spent_failed_requests,
                faults_served=server.faults_served(script, fixture, api, arm=arm),
                attempts=item.attempts,
                key=item.key,
                spawns=item.score.total_spawns,
            )
        )
    labels = [a.label() for a in agents]
    rows.sort(
        key=lambda r: (
            r.fixture,
            labels.index(of[r.agent][0].label()),
            scripts.index(r.case.script),
            r.case.solo,
        )
    )
    said = {a.agent: a.version for a in outcome.report.options.agents}
    versions = tuple(said.get(label) for label in labels)
    result = SelftestOutcome(
        tuple(rows), outcome.run_dir, tuple(labels), versions, len(outcome.report.not_started)
    )
    record_outcome(result, outcome.report, runs_dir)
    return result


def record_outcome(outcome: SelftestOutcome, report: RunReport, runs_dir: Path) -> None:
    """Write the run's report again with the rows' verdict in it (the run wrote it before
    they were judged), then the runs index."""
    from harness.report.write import write_report
    from harness.runs.index import write_index

    verdict = SelftestVerdict(tuple(row.verdict() for row in outcome.rows))
    try:
        write_report(outcome.run_dir, replace(report, selftest=verdict))
        write_index(runs_dir)
    except (OSError, HarnessError) as exc:  # the table is printed whatever happens
        warnings.warn(f"{outcome.run_dir}: the selftest's verdict not kept: {exc}", stacklevel=2)


def render_table(outcome: SelftestOutcome, width: int = WIDTH) -> str:
    """The selftest table, within ``width`` columns: a row per script (and agent, a column
    where the run has several; a section per fixture where it has several), whether it
    holds first and the verdict last, wrapped; where a row differs from what was expected
    (a verdict, tokens or cost off the bill, faults), the verdict cell says how."""
    fixtures = sorted({r.fixture for r in outcome.rows})
    several_agents = len(outcome.agents) > 1
    faulty = any(r.faults_served or r.faults for r in outcome.rows)
    header: tuple[str, ...] = (
        "", *(("agent",) if several_agents else ()), "script", "turns", "reqs", "tokens",
        "cost", *(("faults",) if faulty else ()), "verdict",
    )  # fmt: skip
    lines = []
    if outcome.agents:
        agents = ", ".join(
            f"{agent} ({version or 'simulated'})"
            for agent, version in zip(outcome.agents, outcome.versions, strict=False)
        )
        where = f" on {fixtures[0]}" if len(fixtures) == 1 else ""
        lines += paragraph(f"selftest of {agents}{where}", width)
    for fixture in fixtures:
        if len(fixtures) > 1:
            lines.append(f"on {fixture}:")
        body = [
            (
                "ok" if r.ok else "FAIL",
                *((r.agent,) if several_agents else ()),
                r.case.label,
                str(r.turns),
                str(r.server_requests),
                "-" if r.status == "error" else f"{r.tokens:,}",
                _cost(r),
                *((f"{r.faults}/{r.faults_served}",) if faulty else ()),
                "; ".join(_verdict_notes(r)),
            )
            for r in outcome.rows
            if r.fixture == fixture
        ]
        numbers = range(header.index("turns"), len(header) - 1)
        lines += table(header, body, right=numbers, width=width, wrap=(len(header) - 1,))
    failed = sum(1 for r in outcome.rows if not r.ok)
    lines += paragraph(
        f"{len(outcome.rows) - failed}/{len(outcome.rows)} rows hold; run: {outcome.run_dir}", width
    )
    lines += paragraph(
        "turns: the parent's assistant turns as scored; reqs: model requests the server "
        "answered for the item (parent, children, internal calls); tokens, cost: what the "
        "harness counted and priced (at the scripted server's play prices, not money), "
        "checked against the server's bill for the item (the "
        "verdict says where they differ; '<=': usage marked a lower bound)"
        + (
            "; faults: requests that failed at the provider as the harness counted them / "
            "what the fault plan served (the verdict says when an item ran again)."
            if faulty
            else "."
        ),
        width,
    )
    return "\n".join(lines)


def _verdict_notes(row: SelftestRow) -> list[str]:
    """The row's verdict (or its error), then what differs from the expectation."""
    notes = [_actual(row)]
    if not row.verdict_ok:
        expected = _expected(row.case)
        if row.case.may_fail:
            expected += " [+" + ", ".join(row.case.may_fail) + "?]"
        notes.append(f"expected {expected}")
    if row.status != "error" and row.tokens != row.billed:
        relation = "<=" if row.tokens_ok else "!="
        notes.append(f"tokens {row.tokens:,} {relation} {row.billed:,} billed")
    if row.status != "error" and not _cost_is_bill(row):
        relation = "<=" if row.cost_ok else "!="
        priced = "unpriced" if row.cost_usd is None else f"${row.cost_usd:.6f}"
        notes.append(f"cost {priced} {relation} ${row.billed_usd:.6f} billed")
    if not row.faults_ok:
        notes.append(f"faults {row.faults} counted, {row.faults_served} served")
    if row.attempts > 1:
        notes.append(f"{row.attempts} attempts")
    return notes


def _cost_is_bill(row: SelftestRow) -> bool:
    return row.cost_usd is not None and math.isclose(
        row.cost_usd, row.billed_usd, rel_tol=1e-9, abs_tol=1e-12
    )


def _cost(row: SelftestRow) -> str:
    """The item's price as every table shows money (the verdict says, to the micro-dollar,
    where it is not the bill's)."""
    if row.status == "error":
        return "-"
    return "unpriced" if row.cost_usd is None else format_usd(row.cost_usd)


def _verdict(status: str, failing: tuple[str, ...]) -> str:
    return f"{status} ({', '.join(failing)})" if failing else status


def _expected(case: SelftestCase) -> str:
    """The verdict a case expects; a solo twin's also says it starts no subagent."""
    expected = _verdict(case.expected_status, case.expected_failing)
    return f"{expected}, no subagent" if case.solo else expected


def _actual(row: SelftestRow) -> str:
    """The verdict the harness reached: an error's cause, else the status and failures (and
    the subagents a solo twin started: the solo arm delegated)."""
    if row.status == "error" and row.error:
        return row.error
    actual = _verdict(row.status, row.failing)
    if row.case.solo and row.spawns:
        actual += f", {row.spawns} subagent{'s' if row.spawns != 1 else ''} started"
    return actual

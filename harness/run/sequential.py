"""``--trials auto``: launch trials for each fixture x agent x model until its sequence
decides.

The planner is the scheduler's source of work (:class:`harness.run.scheduler.WorkSource`):
when a slot is free it hands out the next trial of the cell that has launched fewest and
still wants more (:func:`harness.stats.sequential.wants_more`, counting the trials in
flight), and records each finished item. Outcomes enter a cell's sequence in **launch
order** (trial number), never in completion order: a failure that times out finishes last,
and completion order would bias the early bounds upwards. An errored trial is left out of
the sequence (never a failure) and still counts against the cap, so an agent that always
errors cannot run forever. Items still running when their cell decides finish and enter
the sequence; the decision, once made, never changes (the method stays valid with them).

A resumed run rebuilds each cell from its kept items, in trial order; the trials of the
first session that left no result (interrupted, errored) run again first, under their own
numbers, so the sequence keeps its launch order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.agents.base import AgentAdapter
from harness.fixtures import Fixture
from harness.model.comparison import cell_label
from harness.model.item import ItemResult
from harness.model.summary import SequentialCell
from harness.plan import SequentialSettings, WorkItem
from harness.stats import sequential as seq
from harness.stats.compare import pair_runs
from harness.stats.power import MAX_PLANNED_TRIALS, regression_power
from harness.stats.summaries import cell_of

Cell = tuple[str, str, str]  # (fixture name, agent label, model)


@dataclass
class _CellRun:
    fixture: Fixture
    agent: AgentAdapter
    model: str
    rule: seq.CellRule
    #: Whether its items' keys name the agent (a run of several agents).
    agent_in_key: bool = False
    launched: int = 0
    #: Trial numbers to launch again before new ones (a resume's gaps).
    again: list[int] = field(default_factory=list)
    #: Trial number -> outcome (None: errored, left out) for trials past the sequence.
    waiting: dict[int, bool | None] = field(default_factory=dict)
    #: The next trial number the sequence needs.
    next_in_order: int = 1
    state: seq.CellState | None = None
    #: Trials taken but withdrawn before their agent launched (the cell decided meanwhile).
    withdrawn: int = 0
    #: The highest trial number whose agent launched (this session, or a kept one).
    highest_launched: int = 0

    def wants_more(self) -> bool:
        state = self.current
        if self.again:  # a resume's gaps: needed while the cell is undecided
            return state.decision is None
        return seq.wants_more(state, self.rule, max(self.launched - state.n, 0))

    @property
    def current(self) -> seq.CellState:
        if self.state is None:
            self.state = seq.start(self.rule)
        return self.state

    def record(self, trial: int, outcome: bool | None) -> None:
        self.waiting[trial] = outcome
        while self.next_in_order in self.waiting:
            value = self.waiting.pop(self.next_in_order)
            if value is not None:
                self.state = seq.update(self.current, value, self.rule)
            self.next_in_order += 1


def baseline_counts(
    baseline: Iterable[ItemResult], agents: Sequence[str], models: Sequence[str]
) -> dict[Cell, tuple[int, int]]:
    """Resolved / scored items of the baseline per (fixture, agent, model) of this run (its
    ``agents`` labels and ``models``), matched as the comparison matches them
    (:func:`harness.stats.compare.pair_runs`)."""
    items = [i for i in baseline if i.status != "error"]
    pair = pair_runs({i.agent for i in items}, {i.model for i in items}, set(agents), set(models))
    counts: dict[Cell, tuple[int, int]] = {}
    for item in items:
        key = (
            item.fixture,
            item.agent if pair.by_agent else agents[0],
            item.model if pair.by_model else models[0],
        )
        won, n = counts.get(key, (0, 0))
        counts[key] = (won + item.resolved, n + 1)
    return counts


class SequentialPlanner:
    """Hands out trials cell by cell until each is decided or capped (thread-safe)."""

    def __init__(
        self,
        fixtures: Sequence[Fixture],
        conditions: Sequence[tuple[AgentAdapter, Sequence[str]]],
        settings: SequentialSettings,
        threshold: float,
        baseline: Mapping[Cell, tuple[int, int]] | None = None,
        kept: Iterable[ItemResult] = (),
    ) -> None:
        keys = [(fx, a, m) for fx in fixtures for a, models in conditions for m in models]
        several = len(conditions) > 1
        counts = dict(baseline or {})
        rules = seq.suite_rules(
            [counts.get((fx.manifest.name, a.label(), m)) for fx, a, m in keys],
            threshold=threshold,
            precision=settings.precision,
            min_trials=settings.min_trials,
            max_trials=settings.max_trials,
        )
        self._cells = {
            (fx.manifest.name, a.label(), m): _CellRun(fx, a, m, rule, several)
            for (fx, a, m), rule in zip(keys, rules, strict=True)
        }
        self._lock = threading.Lock()
        self._resume(kept)

    def _resume(self, kept: Iterable[ItemResult]) -> None:
        by_cell: dict[Cell, dict[int, ItemResult]] = {}
        for item in kept:
            by_cell.setdefault(cell_of(item), {})[item.trial] = item
        for key, items in by_cell.items():
            cell = self._cells.get(key)
            if cell is None:
                continue
            cell.launched = cell.highest_launched = max(items)
            cell.again = [t for t in range(1, cell.launched + 1) if t not in items]
            for trial in sorted(items):
                cell.record(trial, _outcome(items[trial]))

    def take(self, has_room: Callable[[WorkItem], bool]) -> WorkItem | None:
        """The next trial to launch (fewest launched first, then cell order), or None."""
        with self._lock:
            order = sorted(self._cells.values(), key=lambda c: c.launched - len(c.again))
            for cell in order:
                if not cell.wants_more():
                    continue
                trial = cell.again[0] if cell.again else cell.launched + 1
                work = WorkItem(cell.fixture, cell.agent, cell.model, trial, cell.agent_in_key)
                if not has_room(work):
                    continue
                if cell.again:
                    cell.again.pop(0)
                else:
                    cell.launched = trial
                return work
            return None

    def confirm(self, work: WorkItem) -> bool:
        """A trial about to launch is still wanted while its cell is undecided (its place
        under the cap was counted when it was taken). One whose cell decided meanwhile is
        withdrawn: its number is passed over in the sequence, as an errored trial's is,
        and it is no longer counted as launched; unless a later trial of the cell launched
        already (items race for slots, and a resume's gaps come after kept trials): then it
        launches too, so the trial numbers stay the launch order without a gap (it was in
        flight when the cell decided: within the promise)."""
        with self._lock:
            cell = self._cells[(work.fixture.manifest.name, work.agent.label(), work.model)]
            if cell.current.decision is None or cell.highest_launched > work.trial:
                cell.highest_launched = max(cell.highest_launched, work.trial)
                return True
            cell.record(work.trial, None)
            cell.withdrawn += 1
            return False

    def exhausted(self) -> bool:
        """No cell wants another trial (and none ever will: finishing trials only decide)."""
        with self._lock:
            return not any(c.wants_more() for c in self._cells.values())

    def remaining(self) -> list[WorkItem]:
        """Nothing is planned ahead: what was not launched is not an item."""
        return []

    def record(self, result: ItemResult) -> str | None:
        """Enter a finished item into its cell (errored: left out of the sequence); a line
        for the console when this decided the cell, else None."""
        with self._lock:
            cell = self._cells.get(cell_of(result))
            if cell is None:
                return None
            before = cell.current.decision
            cell.record(result.trial, _outcome(result))
            state = cell.current
            if before is not None or state.decision is None:
                return None
            agent = result.agent if cell.agent_in_key else ""
            return (
                f"{cell_label(result.fixture, agent, result.model)} decided after "
                f"{state.decided_at or state.n} trials: {state.decision}"
            )

    def outcomes(self) -> dict[Cell, SequentialCell]:
        """How each cell stands, for the report."""
        with self._lock:
            return {key: _summary(cell) for key, cell in self._cells.items()}


def _outcome(result: ItemResult) -> bool | None:
    return None if result.status == "error" else result.resolved


STOP_REASONS = {
    "regressed": "decided",
    "not-regressed": "decided",
    "precise": "precise",
    "cap": "cap",
}


#: The most power a fixed design is matched to: near-certain decisions (a collapse) would
#: otherwise ask for thousands of fixed trials to match a power of 0.99999.
MATCHED_POWER_CAP = 0.99


def fixed_trials(state: seq.CellState, rule: seq.CellRule) -> int | None:
    """Trials per run a fixed design (the stratified rate comparison) needs for the power
    this cell's sequential design had, both at the observed rates: a "regressed" cell's
    trials saved are this minus what it used. None without a baseline or a drop."""
    if rule.baseline is None or state.decision != "regressed" or state.n == 0:
        return None
    base_rate = rule.baseline[0] / rule.baseline[1]
    cand_rate = state.successes / state.n
    drop = base_rate - cand_rate
    if drop <= 0:
        return None
    power = seq.operating_characteristics(cand_rate, rule).p_regressed
    if power <= 0:
        return None
    return seq.fixed_trials_for_same_power(
        min(power, MATCHED_POWER_CAP),
        lambda n: regression_power([base_rate], n, min(drop, base_rate)),
        max_n=MAX_PLANNED_TRIALS,
    )


def _summary(cell: _CellRun) -> SequentialCell:
    state, rule = cell.current, cell.rule
    status = seq.status(state, rule)
    return SequentialCell(
        question="regression" if rule.compares else "rate",
        status=status if status != "running" else "stopped",
        stop_reason=STOP_REASONS.get(status, "stopped"),
        trials=state.n,
        launched=cell.launched - cell.withdrawn,
        decided_at=state.decided_at,
        lower=state.lower,
        upper=state.upper,
        alpha=rule.alpha,
        min_trials=rule.min_trials,
        max_trials=rule.max_trials,
        baseline=rule.baseline,
        fixed_trials=fixed_trials(state, rule),
    )

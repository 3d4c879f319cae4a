"""What a run is: its configuration, its work items (fixtures x agents x models x trials)
and the identity hash ``--resume`` checks."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness import __version__
from harness.errors import UsageError
from harness.model.comparison import (
    DEFAULT_COST_THRESHOLD,
    DEFAULT_THRESHOLD,
    FAIL_ON,
    fail_on_parts,
)

if TYPE_CHECKING:  # the CLI reads this module's limits at start-up: keep it cheap
    from harness.agents.base import AgentAdapter
    from harness.fixtures import Fixture
    from harness.pricing import PriceTable

#: A hard ceiling on concurrency: each item runs an agent, a daemon and children.
MAX_CONCURRENCY = 64
#: An item lost to the provider runs again this many more times by default: a passing
#: throttle or overload usually clears within two waits; more only spends on an outage.
DEFAULT_RETRIES = 2
MAX_RETRIES = 20
#: The wait before an item's first retry (doubling after each): the agents retry for
#: seconds to minutes on their own first (Claude Code ~167 s, opencode ~70 s), so what
#: beat them needs a while to clear.
DEFAULT_RETRY_BACKOFF_S = 30.0
#: The longest wait before a retry, whatever the backoff or the provider's retry-after.
MAX_RETRY_WAIT_S = 900.0
#: Items in a row lost to the provider after their retries before the run stops: three
#: are an outage, not a throttle, and the rest of the suite would only burn time and money.
DEFAULT_MAX_PROVIDER_ERRORS = 3


@dataclass(frozen=True)
class WorkItem:
    """One unit of work: a fixture, the agent that runs it, a model and a trial number
    (1-based). The key is ``fixture:model:trial``; in a run of several agents
    (``agent_in_key``) ``fixture:agent:model:trial``."""

    fixture: Fixture
    agent: AgentAdapter
    model: str
    trial: int
    agent_in_key: bool = False
    #: Which attempt of the item this is (1, then more when the provider failed it); not
    #: part of its key: every attempt is the same item.
    attempt: int = 1

    @property
    def key(self) -> str:
        agent = f"{self.agent.label()}:" if self.agent_in_key else ""
        return f"{self.fixture.manifest.name}:{agent}{self.model}:{self.trial}"

    @property
    def dir_name(self) -> str:
        return item_dir_name(self.key)


def item_dir_name(key: str) -> str:
    """A filesystem-safe, readable and unique directory name for an item key."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", key.replace(":", "__"))


@dataclass(frozen=True)
class ExecutorSettings:
    """What ``--executor`` and its options say (not part of the plan's identity: a run may
    resume elsewhere). Executor-specific fields are ignored by the others."""

    name: str = "local"
    #: Ray: the cluster to join (``auto``: the one ``RAY_ADDRESS`` or a local ``ray start``
    #: names).
    ray_address: str = "auto"
    #: Ray: the custom resource a node must offer to run an item (one unit per item); None
    #: means the agent's name (``sim``, ``prime-agent``).
    ray_resource: str | None = None


@dataclass(frozen=True)
class SequentialSettings:
    """``--trials auto``: trials per fixture x model until its sequence decides, at least
    ``min_trials`` and at most ``max_trials``; without a baseline, until the resolved rate
    is known to ``precision`` (half-width)."""

    min_trials: int = 2
    max_trials: int = 20
    precision: float = 0.10


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run. The plan-defining part is hashed for ``--resume``."""

    fixtures: tuple[str, ...]
    models: tuple[str, ...]
    #: The agents compared, in ``--agent`` order (the first is the reference the others
    #: are compared with).
    agents: tuple[AgentAdapter, ...]
    trials: int = 1
    concurrency: int = 1
    provider_caps: tuple[tuple[str, int], ...] = ()
    timeout_s: float = 1800.0
    runs_dir: Path = Path("runs")
    keep_workdir: bool = False
    baseline: Path | None = None
    #: ``--compare-shared-only``: against the baseline, only the cells both runs ran.
    compare_shared_only: bool = False
    threshold: float = DEFAULT_THRESHOLD
    #: The gates that make the exit code 1, comma-joined (``regression,cost``).
    fail_on: str = "unresolved"
    cost_threshold: float = DEFAULT_COST_THRESHOLD
    #: Prices given by the user (``--prices FILE``), before the price library's.
    prices: PriceTable | None = None
    #: The budget: no new item starts once finished items cost this much (None: no limit).
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    #: ``--trials auto`` (None: ``trials`` fixed trials per fixture x model).
    sequential: SequentialSettings | None = None
    #: Where fixture names are looked up, in order (empty: ``./fixtures``, then the bundled
    #: ones; see :mod:`harness.fixtures.lookup`).
    fixtures_roots: tuple[Path, ...] = ()
    #: Where each item's auth.json/models.json come from (None: the user's agent home).
    agent_home_source: Path | None = None
    #: Variables added to the caller's environment for every item (selftest's endpoint).
    extra_env: tuple[tuple[str, str], ...] = ()
    #: Where items run (``--executor``); not part of the plan: a run may resume elsewhere.
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    #: Run only these items of the plan (``--rerun-failed``: an earlier run's failures).
    only_keys: tuple[str, ...] = ()
    #: The run this one re-runs items of, as ``run id`` (None: a run of its own).
    origin: str | None = None
    #: How many more times an item that ended as a provider error runs (``--retries``).
    retries: int = DEFAULT_RETRIES
    #: The wait before the first retry of an item; it doubles for each next one.
    retry_backoff_s: float = DEFAULT_RETRY_BACKOFF_S
    #: Items in a row lost to the provider (or unable to start) that stop the run (0: never).
    max_provider_errors: int = DEFAULT_MAX_PROVIDER_ERRORS
    #: Variables set in every item's agent environment (``--agent-env``), per agent label.
    agent_env: tuple[tuple[str, str, str], ...] = ()
    #: The run is a selftest (scripted models at play prices): its options say so from its
    #: start (run.json too), its report leads with the selftest's verdict, and it is never
    #: the ``latest`` a comparison picks, even when cut off before its outcome.
    selftest: bool = False
    #: ``--solo``: beside each item, its solo twin (the same agent, model, fixture and trial,
    #: asked to work alone).
    solo: bool = False

    def validate(self) -> None:
        if self.trials < 1:
            raise UsageError("--trials must be at least 1")
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise UsageError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}")
        if self.timeout_s <= 0:
            raise UsageError("--timeout must be positive")
        if not self.fixtures:
            raise UsageError("no fixture given: use --fixture NAME|PATH (or --fixture all)")
        if not self.agents:
            raise UsageError("no agent given: use --agent NAME")
        labels = [a.label() for a in self.agents]
        if len(set(labels)) != len(labels):
            raise UsageError(f"--agent given twice with the same value: {', '.join(labels)}")
        for agent, models in agent_models(self):
            for model in models:
                agent.check_model(model)
        parts = fail_on_parts(self.fail_on)
        unknown = sorted(set(parts) - set(FAIL_ON))
        if unknown or not parts or ("none" in parts and len(parts) > 1):
            raise UsageError(
                f"--fail-on {self.fail_on}: expected one or more of {', '.join(FAIL_ON[:3])}, "
                "or none"
            )
        for gate in ("regression", "cost"):
            if gate in parts and self.baseline is None:
                raise UsageError(f"--fail-on {gate} needs --compare-baseline BASELINE")
        if not 0 <= self.threshold < 1:
            raise UsageError("--threshold must be in [0, 1): a rate difference, e.g. 0.05")
        if not (self.cost_threshold >= 0 and math.isfinite(self.cost_threshold)):
            raise UsageError("--cost-threshold must be a finite ratio >= 0, e.g. 0.20 for 20%")
        if self.max_cost_usd is not None and not (
            self.max_cost_usd > 0 and math.isfinite(self.max_cost_usd)
        ):
            raise UsageError(f"--max-cost must be a number of USD > 0, got {self.max_cost_usd}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise UsageError(f"--max-tokens must be at least 1, got {self.max_tokens}")
        if not 0 <= self.retries <= MAX_RETRIES:
            raise UsageError(f"--retries must be between 0 and {MAX_RETRIES}, got {self.retries}")
        if not (0 <= self.retry_backoff_s <= MAX_RETRY_WAIT_S):
            raise UsageError(
                f"--retry-backoff must be between 0 and {MAX_RETRY_WAIT_S:g} seconds, "
                f"got {self.retry_backoff_s:g}"
            )
        if self.max_provider_errors < 0:
            raise UsageError(
                f"--max-provider-errors must be 0 (never stop) or more, got {self.max_provider_errors}"
            )
        auto = self.sequential
        if auto is not None:
            if not 1 <= auto.min_trials <= auto.max_trials:
                raise UsageError(
                    f"--min-trials {auto.min_trials} and --max-trials {auto.max_trials}: need "
                    "1 <= min <= max"
                )
            if not 0 < auto.precision < 1:
                raise UsageError(f"--precision must be in (0, 1), got {auto.precision}")
            if self.only_keys:
                raise UsageError("--rerun-failed re-runs fixed items: it cannot use --trials auto")


def agent_models(config: RunConfig) -> tuple[tuple[AgentAdapter, tuple[str, ...]], ...]:
    """Each agent with the models it runs. One agent runs every ``--model`` (or its own
    default models). Among several, a simulated agent runs the ``sim/`` models given (else
    its default ones) and a real agent every other model: the sim calls no model, so it
    never carries a real model's name."""
    if len(set(config.models)) != len(config.models):
        raise UsageError("--model given twice with the same value")
    if len(config.agents) == 1:
        agent = config.agents[0]
        models = config.models or agent.default_models()
        if not models:
            raise UsageError(
                "--model is required with a real agent (e.g. anthropic/claude-sonnet-4-5)"
            )
        return ((agent, models),)
    out = []
    for agent in config.agents:
        sim = agent.simulated
        mine = tuple(m for m in config.models if m.startswith(SIM_MODEL_PREFIX) == sim)
        models = mine or agent.default_models()
        if not models:
            raise UsageError(
                f"--agent {agent.label()}: no model for it: give a --model for the real "
                "agents (e.g. anthropic/claude-sonnet-4-5); sim/ models go to the simulated one"
            )
        out.append((agent, models))
    return tuple(out)


def run_conditions(config: RunConfig) -> tuple[tuple[AgentAdapter, tuple[str, ...]], ...]:
    """What the run plans: each agent with its models (:func:`agent_models`) and, with
    ``--solo``, right after it its solo twin with the same models (so a plan's turns put each
    item and its twin side by side in time)."""
    conditions = agent_models(config)
    if not config.solo:
        return conditions
    return tuple(
        c for agent, models in conditions for c in ((agent, models), (agent.solo_twin(), models))
    )


#: The simulated agent's models (its behaviours): ``sim/honest``, ``sim/flaky=0.5``.
SIM_MODEL_PREFIX = "sim/"


def effective_models(config: RunConfig) -> tuple[str, ...]:
    """Every model of the run, each once, in the order the agents run them."""
    models: dict[str, None] = {}
    for _agent, mine in agent_models(config):
        models.update(dict.fromkeys(mine))
    return tuple(models)


def load_fixtures(config: RunConfig) -> list[Fixture]:
    """The run's fixtures, loaded and validated, each name once."""
    from harness.fixtures import load_fixture
    from harness.fixtures.lookup import expand_fixture_names, fixture_roots

    roots = config.fixtures_roots or fixture_roots()
    fixtures = [load_fixture(p) for p in expand_fixture_names(config.fixtures, roots)]
    seen: dict[str, Path] = {}
    unique = []
    for fx in fixtures:
        prior = seen.get(fx.manifest.name)
        if prior is not None and prior != fx.path:
            raise UsageError(f"two fixtures are named {fx.manifest.name!r}: {prior} and {fx.path}")
        if prior is None:
            seen[fx.manifest.name] = fx.path
            unique.append(fx)
    if not unique:
        raise UsageError("no valid fixture found")
    return unique


def build_plan(
    fixtures: Sequence[Fixture],
    conditions: Sequence[tuple[AgentAdapter, Sequence[str]]],
    trials: int,
) -> list[WorkItem]:
    """Every fixture x (agent, model) x trial; keys (:attr:`WorkItem.key`) asserted unique."""
    several = len(conditions) > 1
    plan = [
        WorkItem(fx, agent, m, t, several)
        for fx in fixtures
        for agent, models in conditions
        for m in models
        for t in range(1, trials + 1)
    ]
    keys = [w.key for w in plan]
    if len(set(keys)) != len(keys):
        raise UsageError("work item keys are not unique")
    dirs = [w.dir_name for w in plan]
    if len(set(dirs)) != len(dirs):
        raise UsageError("two work items map to the same item directory name")
    if not several:
        return sorted(plan, key=lambda w: w.key)
    # Several agents take turns, trial by trial: what drifts during a run (the endpoint's
    # load, the machine's) falls on every agent alike, not on whichever ran last.
    turn = {agent.label(): n for n, (agent, _) in enumerate(conditions)}
    return sorted(
        plan, key=lambda w: (w.fixture.manifest.name, w.trial, turn[w.agent.label()], w.model)
    )


def plan_identity(config: RunConfig, fixtures: Sequence[Fixture]) -> dict[str, object]:
    """What must not change between a run and its ``--resume`` (the trials may grow: a
    resume with more adds trials; that is checked apart)."""
    identity: dict[str, object] = {
        "harness_version": __version__,
        "fixtures": {fx.manifest.name: fx.content_hash() for fx in fixtures},
        "models": list(effective_models(config)),
        "seed": config.agents[0].seed,
        "timeout_s": config.timeout_s,
    }
    conditions = run_conditions(config)
    if len(conditions) == 1:
        identity["agent"] = conditions[0][0].label()
    else:  # each agent with the models it runs
        identity["agents"] = [[agent.label(), list(models)] for agent, models in conditions]
    if config.only_keys:
        identity["only_keys"] = sorted(config.only_keys)
    if config.sequential is not None:
        # The sequences' rule: a resume must continue them under the same one (the cap may
        # move: the method is valid whenever it stops).
        identity["sequential"] = {
            "min_trials": config.sequential.min_trials,
            "precision": config.sequential.precision,
            "threshold": config.threshold,
            "baseline": str(config.baseline) if config.baseline else None,
        }
    return identity


def restrict(plan: list[WorkItem], only_keys: Sequence[str]) -> list[WorkItem]:
    """The items of ``plan`` named in ``only_keys`` (all of it when empty); a key the plan
    does not hold is refused (the fixtures or models changed since)."""
    if not only_keys:
        return plan
    wanted = set(only_keys)
    missing = wanted - {w.key for w in plan}
    if missing:
        raise UsageError(
            f"items not in this run's plan: {', '.join(sorted(missing)[:5])} "
            "(did its fixtures or models change?)"
        )
    return [w for w in plan if w.key in wanted]


def identity_hash(identity: dict[str, object]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()

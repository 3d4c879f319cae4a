"""One work item's result: what the harness saw of the agent process, and the score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Self, get_args

from harness.model.record import Record
from scorers import ItemScore, ProviderFaults
from scorers.faults import FATAL

#: How a solo twin's agent label ends (``sim+solo``, ``prime-agent:resident+solo``).
SOLO_SUFFIX = "+solo"

ItemStatus = Literal["resolved", "unresolved", "error"]

#: How an item's error begins when the provider failed and the agent could not get past it
#: (``scorers.provider``): an error the harness retries (``run --retries``).
PROVIDER_ERROR_PREFIX = "provider: "
#: How an item's error begins when every model request failed (credentials refused, ...).
MODEL_NEVER_REACHED = "model never reached"


@dataclass(frozen=True)
class RunFacts(Record):
    """What the harness observed about the agent process itself."""

    wall_time_s: float
    exit_code: int | None
    timed_out: bool
    error: str | None  # why the harness could not run the agent (infrastructure), or None
    agent_error: str | None  # first error the agent reported
    killed_processes: int = 0
    leftover_processes: int = 0
    #: The time limit the agent ran under (so "timed out after N s" needs nothing else).
    timeout_s: float | None = None
    #: The model requests that failed at the provider, from the agent's own artifacts
    #: (None: read from a report that predates them).
    provider_faults: ProviderFaults | None = None

    @property
    def failed_requests(self) -> int:
        return self.provider_faults.failed_requests if self.provider_faults else 0

    @property
    def lost_to_provider(self) -> bool:
        """The run ended because the provider failed and the agent could not get past it."""
        return self.error is not None and self.error.startswith(PROVIDER_ERROR_PREFIX)

    @property
    def fatal_fault(self) -> str | None:
        """The kind of the fault a run ended on when no retry gets past it (the endpoint
        unreachable, the credentials refused): a run lost to the provider, or one that never
        reached the model; None otherwise."""
        if self.error is None or self.provider_faults is None:
            return None
        final = [f.kind for f in self.provider_faults.evidence if not f.retried]
        if self.lost_to_provider:
            return next((k for k in reversed(final) if k in FATAL), None)
        if self.error.startswith(MODEL_NEVER_REACHED):
            return next((k for k in final if k in FATAL), None)
        return None


@dataclass(frozen=True)
class Attempt(Record):
    """An earlier attempt of an item, run again because the provider failed it: what it
    cost and why it ended. Its artifacts are kept in the item's ``dir`` (relative)."""

    attempt: int
    error: str | None
    tokens: int
    cost_usd: float | None
    failed_requests: int
    wall_time_s: float
    dir: str
    #: Its failed requests by kind (``facts.provider_faults.by_kind`` of that attempt).
    by_kind: dict[str, int] | None = None


@dataclass(frozen=True)
class ItemCost(Record):
    """What an item's usage cost in USD, priced by the harness (:mod:`harness.pricing`).

    ``usd`` is None when a model with tokens has no known price (``unpriced`` names them):
    never a guess. ``source`` says where the prices came from (``genai-prices``, ``price
    file``, both joined by ``+``, or ``none``), ``detail`` which price each model got;
    ``complete`` is False when the usage is a lower bound, and then so is the cost;
    ``note`` flags an approximation (a tiered price's base tier).
    """

    usd: float | None
    source: str
    detail: tuple[str, ...]
    unpriced: tuple[str, ...]
    complete: bool
    note: str | None = None


@dataclass(frozen=True)
class ItemResult(Record):
    """One scored (or errored) work item. Errored items never count as resolved.

    In JSON: the identity, ``status`` (derived, written for readers of the file), the
    item's directory name, ``facts`` and ``score`` as nested objects.
    """

    #: ``fixture:model:trial`` (``fixture:agent:model:trial`` in a run of several agents).
    key: str
    fixture: str
    model: str
    #: 1-based trial number within its fixture × agent × model cell.
    trial: int
    #: Its directory under ``items/``: everything needed to re-score it offline.
    item_dir: str
    #: Every criterion's verdict and the evidence behind it, with usage and efficiency.
    score: ItemScore
    #: What the harness saw of the agent process (wall time, exit code, error, faults).
    facts: RunFacts
    #: What the item cost (None: not priced, e.g. a report written before prices).
    cost: ItemCost | None = None
    #: The agent that ran it, as the report names agents (``sim``, ``sim:flaky=0.5``).
    agent: str = ""
    #: How many times the item ran (>= 1): earlier attempts ended as provider errors.
    attempts: int = 1
    #: Those earlier attempts, first to last (this result is the last attempt's).
    earlier: tuple[Attempt, ...] = ()

    #: Written beside the fields for readers of the JSON (see harness.model.schema).
    JSON_EXTRA: ClassVar[dict[str, Any]] = {
        "status": {
            "description": "resolved, unresolved, or error (kept out of every rate).",
            "enum": list(get_args(ItemStatus)),
        }
    }

    @property
    def status(self) -> ItemStatus:
        if self.facts.error is not None:
            return "error"
        return "resolved" if self.score.resolved else "unresolved"

    @property
    def resolved(self) -> bool:
        return self.status == "resolved"

    @property
    def failed_criteria(self) -> tuple[str, ...]:
        """The failed criteria of a scored item; none for an error (its criteria are not
        the agent's doing, so they are not held against it)."""
        return () if self.status == "error" else self.score.failed_criteria

    @property
    def arm(self) -> str:
        """``solo`` for a solo twin's item (its agent labelled ``+solo``), else ``swarm``."""
        return "solo" if self.agent.endswith(SOLO_SUFFIX) else "swarm"

    @property
    def cost_usd(self) -> float | None:
        """The item's cost in USD; None when unpriced (or not priced)."""
        return self.cost.usd if self.cost is not None else None

    @property
    def spent_tokens(self) -> int:
        """Tokens every attempt used (what a budget counts), this one's and the earlier."""
        return self.score.tokens_used + sum(a.tokens for a in self.earlier)

    @property
    def earlier_usd(self) -> float | None:
        """USD the earlier attempts cost; None when one with tokens has no price."""
        if any(a.cost_usd is None and a.tokens > 0 for a in self.earlier):
            return None
        return sum(a.cost_usd or 0.0 for a in self.earlier)

    @property
    def spent_usd(self) -> float | None:
        """USD every attempt cost; None when one with tokens has no price."""
        earlier = self.earlier_usd
        if earlier is None or (self.cost_usd is None and self.score.tokens_used > 0):
            return None
        return (self.cost_usd or 0.0) + earlier

    @property
    def spent_failed_requests(self) -> int:
        """Requests that failed at the provider over every attempt."""
        return self.facts.failed_requests + sum(a.failed_requests for a in self.earlier)

    def measure(self, name: str) -> float | None:
        """A figure by name (:data:`harness.model.summary.MEASURES`): the item's cost, or a
        field of the score, its efficiency or the run facts; ``None`` when none has it."""
        for part in (self, self.score, self.score.efficiency, self.facts):
            value = getattr(part, name, None)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
        return None

    def passed(self, criterion: str) -> bool | None:
        """Whether ``criterion`` passed; ``None`` when the score did not judge it."""
        return self.score.passed(criterion)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "fixture": self.fixture,
            "agent": self.agent,
            "model": self.model,
            "trial": self.trial,
            "status": self.status,
            "item_dir": self.item_dir,
            "facts": self.facts.to_dict(),
            "score": self.score.to_dict(),
            "cost": self.cost.to_dict() if self.cost is not None else None,
            "attempts": self.attempts,
            "earlier": [a.to_dict() for a in self.earlier],
        }

    @classmethod
    def from_dict(cls, data: object, where: str | None = None) -> Self:
        where = where or cls.__name__
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object, got {type(data).__name__}")
        fields = {k: v for k, v in data.items() if k != "status"}
        attempts = fields.pop("attempts", 1)  # absent: written before retries (one attempt)
        earlier_data = fields.pop("earlier", [])
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
            raise ValueError(f"{where}.attempts: expected an integer >= 1, got {attempts!r}")
        if not isinstance(earlier_data, list):
            raise ValueError(f"{where}.earlier: expected a list")
        earlier = tuple(
            Attempt.from_dict(a, f"{where}.earlier[{n}]") for n, a in enumerate(earlier_data)
        )
        try:
            score = ItemScore.from_dict(fields.pop("score"))
        except KeyError:
            raise ValueError(f"{where}: missing fields ['score']") from None
        except ValueError as exc:
            raise ValueError(f"{where}.{exc}") from None
        facts_data = fields.pop("facts", None)
        if isinstance(facts_data, dict) and "provider_faults" not in facts_data:
            facts_data = {**facts_data, "provider_faults": None}  # written before faults
        facts = RunFacts.from_dict(facts_data, f"{where}.facts")
        cost_data = fields.pop("cost", None)
        cost = None if cost_data is None else ItemCost.from_dict(cost_data, f"{where}.cost")
        identity = _Identity.from_dict(fields, where)
        result = cls(
            identity.key,
            identity.fixture,
            identity.model,
            identity.trial,
            identity.item_dir,
            score,
            facts,
            cost,
            identity.agent,
            attempts,
            earlier,
        )
        if "status" in data and data["status"] != result.status:
            raise ValueError(f"{where}.status: {data['status']!r}, but the item is {result.status}")
        return result


@dataclass(frozen=True)
class _Identity(Record):
    key: str
    fixture: str
    agent: str
    model: str
    trial: int
    item_dir: str

"""One work item's result: what the harness saw of the agent process, and the score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Self, get_args

from harness.model.record import Record
from scorers import ItemScore

ItemStatus = Literal["resolved", "unresolved", "error"]


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


@dataclass(frozen=True)
class ItemResult(Record):
    """One scored (or errored) work item. Errored items never count as resolved.

    In JSON: the identity, ``status`` (derived, written for readers of the file), the
    item's directory name, ``facts`` and ``score`` as nested objects.
    """

    key: str
    fixture: str
    model: str
    trial: int
    item_dir: str
    score: ItemScore
    facts: RunFacts

    #: Written beside the fields for readers of the JSON (see harness.model.schema).
    JSON_EXTRA: ClassVar[dict[str, Any]] = {"status": {"enum": list(get_args(ItemStatus))}}

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

    def measure(self, name: str) -> float | None:
        """An efficiency figure by name (:data:`harness.model.summary.MEASURES`): a field
        of the score or of the run facts; ``None`` when neither has it."""
        for part in (self.score, self.facts):
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
            "model": self.model,
            "trial": self.trial,
            "status": self.status,
            "item_dir": self.item_dir,
            "facts": self.facts.to_dict(),
            "score": self.score.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: object, where: str | None = None) -> Self:
        where = where or cls.__name__
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object, got {type(data).__name__}")
        fields = {k: v for k, v in data.items() if k != "status"}
        try:
            score = ItemScore.from_dict(fields.pop("score"))
        except KeyError:
            raise ValueError(f"{where}: missing fields ['score']") from None
        except ValueError as exc:
            raise ValueError(f"{where}.{exc}") from None
        facts = RunFacts.from_dict(fields.pop("facts", None), f"{where}.facts")
        identity = _Identity.from_dict(fields, where)
        result = cls(
            identity.key,
            identity.fixture,
            identity.model,
            identity.trial,
            identity.item_dir,
            score,
            facts,
        )
        if "status" in data and data["status"] != result.status:
            raise ValueError(f"{where}.status: {data['status']!r}, but the item is {result.status}")
        return result


@dataclass(frozen=True)
class _Identity(Record):
    key: str
    fixture: str
    model: str
    trial: int
    item_dir: str

"""Typed results of one work item, as they appear in ``report.json``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from scorers import ItemScore

ItemStatus = Literal["resolved", "unresolved", "error"]


@dataclass(frozen=True)
class RunFacts:
    """What the harness observed about the agent process itself."""

    wall_time_s: float
    exit_code: int | None
    timed_out: bool
    error: str | None  # why the harness could not run the agent (infrastructure), or None
    agent_error: str | None  # first error the agent reported
    killed_processes: int = 0
    leftover_processes: int = 0


@dataclass(frozen=True)
class ItemResult:
    """One scored (or errored) work item. Errored items never count as resolved."""

    key: str
    fixture: str
    model: str
    trial: int
    item_dir: str
    score: ItemScore
    facts: RunFacts

    @property
    def status(self) -> ItemStatus:
        if self.facts.error is not None:
            return "error"
        return "resolved" if self.score.resolved else "unresolved"

    @property
    def resolved(self) -> bool:
        return self.status == "resolved"

    def to_dict(self) -> dict[str, Any]:
        """The flat report item: run facts around the scorer's fields (exact round trip)."""
        score = self.score.to_dict()
        score_resolved = score.pop("resolved")
        score_agent_error = score.pop("agent_error")
        score_version = score.pop("schema_version")
        # A criterion the score keeps no flat field for still gets its pass flag, under
        # its registry field name (``checks`` holds the rest).
        flags = {c["field"]: c["passed"] for c in score["checks"] if c["field"] not in score}
        return {
            "key": self.key,
            "fixture": self.fixture,
            "model": self.model,
            "trial": self.trial,
            "status": self.status,
            "resolved": self.resolved,
            **score,
            **flags,
            "wall_time_s": round(self.facts.wall_time_s, 3),
            "exit_code": self.facts.exit_code,
            "timed_out": self.facts.timed_out,
            "error": self.facts.error,
            "agent_error": self.facts.agent_error,
            "killed_processes": self.facts.killed_processes,
            "leftover_processes": self.facts.leftover_processes,
            "item_dir": self.item_dir,
            "score_resolved": score_resolved,
            "score_agent_error": score_agent_error,
            "score_schema_version": score_version,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ItemResult:
        facts = RunFacts(
            wall_time_s=float(data["wall_time_s"]),
            exit_code=data["exit_code"],
            timed_out=bool(data["timed_out"]),
            error=data["error"],
            agent_error=data["agent_error"],
            killed_processes=int(data.get("killed_processes", 0)),
            leftover_processes=int(data.get("leftover_processes", 0)),
        )
        renamed = {
            "resolved": "score_resolved",
            "agent_error": "score_agent_error",
            "schema_version": "score_schema_version",
        }
        score_fields = {
            f.name: data[renamed.get(f.name, f.name)] for f in dataclasses.fields(ItemScore)
        }
        return cls(
            key=str(data["key"]),
            fixture=str(data["fixture"]),
            model=str(data["model"]),
            trial=int(data["trial"]),
            item_dir=str(data["item_dir"]),
            score=ItemScore.from_dict(score_fields),
            facts=facts,
        )

"""swarm-harness scorer: pure, dependency-free verdicts from collected artifacts.

Parse, then judge: each agent's parsers (``scorers.prime_agent``, ``scorers.claude_code``)
turn raw bytes into agent-neutral records (``scorers.records``); one rule module per
criterion judges them; ``scorers.score`` assembles the :class:`ItemScore`. The package root
exports only what every agent shares; an agent's entry point is imported from its package.
"""

from __future__ import annotations

from scorers.records import RunEvidence, TokenUsage
from scorers.score import score_evidence, score_nothing
from scorers.types import SCORE_SCHEMA_VERSION, Manifest, Opener, Shard
from scorers.verdict import (
    Check,
    DuplicateSpawn,
    Efficiency,
    ItemScore,
    UntracedShard,
    UsageSummary,
    WrongAnswer,
)

__all__ = [
    "SCORE_SCHEMA_VERSION",
    "Check",
    "DuplicateSpawn",
    "Efficiency",
    "ItemScore",
    "Manifest",
    "Opener",
    "RunEvidence",
    "Shard",
    "TokenUsage",
    "UntracedShard",
    "UsageSummary",
    "WrongAnswer",
    "score_evidence",
    "score_nothing",
]

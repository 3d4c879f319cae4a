"""swarm-harness scorer: pure, dependency-free verdicts from collected artifacts.

Parse, then judge: each agent's parsers (``scorers.prime_agent``, ``scorers.claude_code``)
turn raw bytes into agent-neutral records (``scorers.records``); one rule module per
criterion judges them; ``scorers.score`` assembles the :class:`ItemScore`. The package root
exports only what every agent shares; an agent's entry point is imported from its package.
"""

from __future__ import annotations

from scorers.faults import ProviderFault
from scorers.provider import NO_FAULTS, ProviderFaults, judge_provider
from scorers.records import RunEvidence, TokenUsage
from scorers.score import Assessment, assess_evidence, score_evidence, score_nothing
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
    "NO_FAULTS",
    "SCORE_SCHEMA_VERSION",
    "Assessment",
    "Check",
    "DuplicateSpawn",
    "Efficiency",
    "ItemScore",
    "Manifest",
    "Opener",
    "ProviderFault",
    "ProviderFaults",
    "RunEvidence",
    "Shard",
    "TokenUsage",
    "UntracedShard",
    "UsageSummary",
    "WrongAnswer",
    "assess_evidence",
    "judge_provider",
    "score_evidence",
    "score_nothing",
]

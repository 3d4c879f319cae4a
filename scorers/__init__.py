"""swarm-harness scorer: pure, dependency-free verdicts from collected artifacts.

Parse, then judge: parsers (``scorers.prime_agent``, ``scorers.artifact``) turn raw bytes
into agent-neutral records (``scorers.records``); one rule module per criterion judges
them; ``scorers.score`` assembles the :class:`ItemScore`.
"""

from __future__ import annotations

from scorers.prime_agent import score_prime_agent
from scorers.score import score_evidence, score_nothing
from scorers.types import (
    SCORE_SCHEMA_VERSION,
    ChildSessionFile,
    Manifest,
    Opener,
    PrimeAgentArtifacts,
    Shard,
)
from scorers.verdict import DuplicateSpawn, ItemScore, UntracedShard, WrongAnswer

__all__ = [
    "SCORE_SCHEMA_VERSION",
    "ChildSessionFile",
    "DuplicateSpawn",
    "ItemScore",
    "Manifest",
    "Opener",
    "PrimeAgentArtifacts",
    "Shard",
    "UntracedShard",
    "WrongAnswer",
    "score_evidence",
    "score_nothing",
    "score_prime_agent",
]

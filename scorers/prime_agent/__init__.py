"""prime-agent: the parsers that know its on-disk formats, and its scoring entry point."""

from __future__ import annotations

from scorers.prime_agent.evidence import collect_evidence
from scorers.prime_agent.ledger import parse_ledger
from scorers.prime_agent.session import parse_session
from scorers.prime_agent.stream import parse_stream
from scorers.prime_agent.types import ChildSessionFile, PrimeAgentArtifacts
from scorers.score import score_evidence
from scorers.types import Manifest
from scorers.verdict import ItemScore


def score_prime_agent(artifacts: PrimeAgentArtifacts, manifest: Manifest) -> ItemScore:
    """Score one prime-agent run: parse its artifacts, then judge them."""
    return score_evidence(collect_evidence(artifacts), manifest)


__all__ = [
    "ChildSessionFile",
    "PrimeAgentArtifacts",
    "collect_evidence",
    "parse_ledger",
    "parse_session",
    "parse_stream",
    "score_prime_agent",
]

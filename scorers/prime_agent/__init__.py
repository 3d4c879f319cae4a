"""prime-agent: the parsers that know its on-disk formats, and its scoring entry point."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from scorers.prime_agent.evidence import collect_evidence
from scorers.prime_agent.ledger import parse_ledger
from scorers.prime_agent.session import parse_session
from scorers.prime_agent.stream import parse_stream
from scorers.score import score_evidence
from scorers.types import Manifest, PrimeAgentArtifacts
from scorers.verdict import ItemScore


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector, restoring its previous state afterwards.

    Scoring a full ledger builds a few hundred thousand small records that never form
    cycles (reference counting frees them all); with the collector on, it re-traverses
    them over and over as they accumulate, which cost about a fifth of the scorer's time
    on a 100,000-record ledger (``benchmarks/bench_scorer.py``).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def score_prime_agent(artifacts: PrimeAgentArtifacts, manifest: Manifest) -> ItemScore:
    """Score one prime-agent run: parse its artifacts, then judge them."""
    with _cyclic_gc_paused():
        return score_evidence(collect_evidence(artifacts), manifest)


__all__ = [
    "collect_evidence",
    "parse_ledger",
    "parse_session",
    "parse_stream",
    "score_prime_agent",
]

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

#: Allocations between young-generation collections while scoring (CPython's default is
#: 700). Scoring a full ledger builds a few hundred thousand small acyclic records, and the
#: default makes the collector re-traverse them over and over (about a fifth of the time on
#: a 100,000-record ledger). The collector stays on, so cycles that hostile input can create
#: (exceptions with tracebacks, for one) are still freed: memory stays bounded.
SCORING_GC_THRESHOLD = 100_000


@contextmanager
def _cyclic_gc_relaxed() -> Iterator[None]:
    """Collect young garbage less often while scoring; restore the thresholds afterwards."""
    previous = gc.get_threshold()
    gc.set_threshold(SCORING_GC_THRESHOLD, *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)


def score_prime_agent(artifacts: PrimeAgentArtifacts, manifest: Manifest) -> ItemScore:
    """Score one prime-agent run: parse its artifacts, then judge them."""
    with _cyclic_gc_relaxed():
        return score_evidence(collect_evidence(artifacts), manifest)


__all__ = [
    "collect_evidence",
    "parse_ledger",
    "parse_session",
    "parse_stream",
    "score_prime_agent",
]

"""Provider faults per run, and the one rule that tells the provider's failure from the agent's.

Reported on every item (``facts.provider_faults``): the model calls that failed at the
provider, by kind, with the evidence the agent left. And one judgement: whether the run
ended as it did *because* the provider failed and the agent could not get past it. Such a
run is an infrastructure error, kept out of every rate; it is never the agent's failure.

The rule (:func:`provider_gave_up`), for a run that did not resolve:

1. the parent's last model call was a transient provider fault (rate limited, overloaded,
   a server error, a stream cut, a timeout, a lost connection): the agent gave up there,
   whatever it had done before. A failed *turn* followed by one that succeeded is not
   this (the agents read their last call, not their first failure);
2. or every failed criterion is explained by children whose last model call was such a
   fault: each failing shard, worker or child is one of theirs. The parent carried on
   without those shards; with a healthy provider it would have had them. A parent could
   have spawned the lost shard again, but whether it did that well is judged when the
   provider lets it (the harness retries the item), not while the provider fails it.

Anything else stays the agent's: a run that failed with a healthy provider, a failure the
lost children do not explain (a wrong answer from a child that worked, a duplicate spawn),
and faults that are not the provider's mood (authentication, a refused request: a run
that never reached the model for want of credentials is an infrastructure error of its
own, "model never reached"). A run that ended on an endpoint nobody can reach is the
provider's too (:data:`scorers.faults.FATAL`: no retry gets past it), and its error
quotes the client's own words for it.

A run whose records show requests answered by a model it was not asked for (a client that
switches models when the provider refuses the one asked for) is the provider's too, resolved
or not: it is not that model's run, and must not be scored as one.

Stops a comparison from reporting a regression that is the provider's, not the agent's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from scorers.faults import FATAL, GAVE_UP, KIND_WORDS, ProviderFault
from scorers.records import ChildSession, RunEvidence, UsageTally
from scorers.types import Manifest
from scorers.usage import parent_usage
from scorers.verdict import ItemScore

#: How many faults an item keeps as evidence (the counts cover them all).
MAX_EVIDENCE = 50


@dataclass(frozen=True, slots=True)
class ProviderFaults:
    """The provider's failed model calls in one run, as the agent recorded them.

    ``failed_requests`` counts every failed request (retried or not), ``by_kind`` splits
    them (:data:`scorers.faults.KIND_WORDS`); ``evidence`` holds the first
    :data:`MAX_EVIDENCE` of them (which session, which request, the provider's words);
    ``gave_up`` says why the run ended as the provider's failure (``provider: ...``), None
    when it did not; ``retry_after_s`` is the longest wait the provider asked for, where
    the agent recorded one.
    """

    failed_requests: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    evidence: tuple[ProviderFault, ...] = ()
    gave_up: str | None = None
    retry_after_s: float | None = None


NO_FAULTS = ProviderFaults()


def _final(faults: Sequence[ProviderFault]) -> ProviderFault | None:
    """The failure a session ended on: its last fault the agent did not retry."""
    return next((f for f in reversed(faults) if not f.retried), faults[-1] if faults else None)


def _gave_up_on(tally: UsageTally | ChildSession) -> ProviderFault | None:
    """The provider's fault a session's last model call failed with (transient, or one
    that no attempt gets past), or None."""
    if not tally.ended_in_fault:
        return None
    last = _final(tally.faults)
    return last if last is not None and last.kind in GAVE_UP else None


#: How much of the client's own words for a fatal fault the item's error quotes.
CLIENT_WORDS_CHARS = 160


def _said(fault: ProviderFault, count: int) -> str:
    status = f"{fault.status} " if fault.status is not None else ""
    return f"{status}{KIND_WORDS[fault.kind]} ×{count}"


def _in_its_words(fault: ProviderFault) -> str:
    """The client's own words for a fault no retry gets past (``: API Error: Can't reach
    the API server ... (ENOTFOUND)``), so the user reads what to fix; else nothing."""
    if fault.kind not in FATAL or not fault.message.strip():
        return ""
    words = " ".join(fault.message.split())
    if len(words) > CLIENT_WORDS_CHARS:
        words = words[: CLIENT_WORDS_CHARS - 1] + "…"
    return f" ({words})"


def _covered(
    score: ItemScore, lost: Sequence[str], evidence: RunEvidence, manifest: Manifest
) -> bool:
    """Whether every failed criterion names only the lost children, their workers or their
    shards."""
    names = {e.child_id: e.name for e in evidence.depth1_spawns()}
    workers = {names[c] for c in lost if c in names}
    shards = {s.file for s in manifest.shards if s.worker in workers}
    mine = {*lost, *workers, *shards}
    failed = [c for c in score.checks if not c.passed]
    return bool(failed) and all(c.failing and set(c.failing) <= mine for c in failed)


def provider_gave_up(
    evidence: RunEvidence, score: ItemScore, manifest: Manifest, parent: UsageTally
) -> str | None:
    """Why an unresolved run is the provider's failure (``provider: ...``), else None."""
    if score.resolved:
        return None
    last = _gave_up_on(parent)
    if last is not None:
        same = sum(1 for f in parent.faults if f.kind == last.kind)
        return f"provider: {_said(last, same)} in the parent, gave up{_in_its_words(last)}"
    lost = [c for c in evidence.child_sessions if _gave_up_on(c) is not None]
    if not lost or not _covered(score, [c.child_id for c in lost], evidence, manifest):
        return None
    finals = [f for c in lost if (f := _gave_up_on(c)) is not None]
    kind = Counter(f.kind for f in finals).most_common(1)[0][0]
    example = next(f for f in finals if f.kind == kind)
    count = sum(1 for c in lost for f in c.faults if f.kind == kind)
    names = {e.child_id: e.name for e in evidence.depth1_spawns()}
    who = ", ".join(sorted(names.get(c.child_id, c.child_id) for c in lost))
    children = f"{len(lost)} child" + ("ren" if len(lost) > 1 else "")
    return (
        f"provider: {_said(example, count)} in {children} ({who}), gave up"
        f"{_in_its_words(example)}; the parent went on without their shards"
    )


def judge_provider(evidence: RunEvidence, score: ItemScore, manifest: Manifest) -> ProviderFaults:
    """The run's provider faults (the parent's from the source its usage is read from, every
    child's from its own transcript) and whether the provider beat the agent."""
    parent = parent_usage(evidence.stream, evidence.session).tally
    faults = [*parent.faults, *(f for c in evidence.child_sessions for f in c.faults)]
    switched = (
        f"provider: the client switched models mid-run ({', '.join(evidence.off_model)} "
        "answered too): this is not a run of the model asked for"
        if evidence.off_model
        else None
    )
    if not faults:
        return ProviderFaults(gave_up=switched) if switched else NO_FAULTS
    waits = [f.retry_after_s for f in faults if f.retry_after_s is not None]
    return ProviderFaults(
        failed_requests=len(faults),
        by_kind=dict(sorted(Counter(f.kind for f in faults).items())),
        evidence=tuple(faults[:MAX_EVIDENCE]),
        gave_up=switched or provider_gave_up(evidence, score, manifest, parent),
        retry_after_s=max(waits) if waits else None,
    )


__all__ = ["MAX_EVIDENCE", "NO_FAULTS", "ProviderFaults", "judge_provider", "provider_gave_up"]

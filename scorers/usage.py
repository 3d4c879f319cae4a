"""Usage: what a run used, from the source its agent makes authoritative, and whether the
evidence holds all of it. Reported, never gating, except that the model must be reached.

Sources, best first:

1. The agent's own account of the whole run (``StreamParse.reported``: Claude Code's
   ``result`` events): parent, subagents and internal calls, per model. Complete unless
   the stream went on after it (cut short).
2. The parent's own messages plus what the transcripts hold for its children
   (prime-agent: the parent transcript's child usage attributions). The parent's messages
   come from one source, never from both: its live event stream, unless the parent
   transcript holds more assistant messages (it holds everything the stream has, and more
   when the parent kept working after the stream ended); a stream with no readable event
   leaves the transcript as the only source. A lower bound when a spawned child left no
   transcript (its model calls were billed and recorded nowhere), when the stream was cut
   short, or when a source under-counts (Claude Code's transcripts, used only without a
   ``result`` event).
"""

from __future__ import annotations

from dataclasses import dataclass

from scorers.records import (
    RunEvidence,
    SessionParse,
    StreamParse,
    UsageSource,
    UsageTally,
)
from scorers.verdict import UsageSummary


@dataclass(frozen=True, slots=True)
class ParentUsage:
    """The parent's own messages, from one source."""

    source: UsageSource | None
    tally: UsageTally


def parent_usage(stream: StreamParse | None, session: SessionParse | None) -> ParentUsage:
    """The parent's messages from the more complete of the stream and the transcript.

    Stops double counting: the transcript repeats the stream's assistant messages, so
    adding both sources would inflate turns and tokens. Stops under-counting too: a parent
    that kept working after the stream ended has turns only the transcript saw. On a tie
    the stream wins (it is written live, so it survives a transcript cut short).
    """
    streamed = stream.usage.assistant_messages if stream is not None else 0
    if session is not None and session.usage.assistant_messages > streamed:
        return ParentUsage("transcript", session.usage)
    if stream is not None and stream.events > 0:
        return ParentUsage("stream", stream.usage)
    if session is not None:
        return ParentUsage("transcript", session.usage)
    return ParentUsage(None, UsageTally())


def _unrecorded_children(evidence: RunEvidence) -> list[str]:
    """Children the parent spawned (depth 1) that left no transcript to count."""
    spawned = {e.child_id for e in evidence.depth1_spawns()}
    recorded = {c.child_id for c in evidence.child_sessions}
    return sorted(spawned - recorded)


def unseen_gap(evidence: RunEvidence, parent: ParentUsage) -> str | None:
    """The gap left by model calls that ended mid-answer or were aborted with no usage recorded
    (the parent's and the children's), or None when there are none.

    Stops a count that looks complete while a billed request is missing from it: from the
    files alone a request aborted after the provider began to answer (and billed) cannot be
    told from one that never reached it (``real-runs/billed-early-exit-undercount``).
    """
    unseen = parent.tally.unseen_calls + sum(c.unseen_calls for c in evidence.child_sessions)
    if not unseen:
        return None
    many = "s" if unseen > 1 else ""
    return (
        f"{unseen} model request{many} ended mid-answer or aborted with no usage recorded "
        "(the provider may have billed them)"
    )


def summarize_usage(evidence: RunEvidence, parent: ParentUsage) -> UsageSummary:
    """The run's usage from its best source, with what is known to be missing."""
    stream, session = evidence.stream, evidence.session
    unseen = unseen_gap(evidence, parent)
    if stream is not None and stream.reported is not None:
        reported = stream.reported
        gaps: tuple[str, ...] = (
            ("the stream went on after its last usage report",) if stream.cut_short else ()
        )
        gaps += (unseen,) if unseen else ()
        return UsageSummary(
            total=reported.total,
            by_model=dict(reported.by_model),
            complete=not gaps,
            source="the agent's usage report",
            gaps=gaps,
            agent_reported_cost_usd=reported.cost_usd,
        )
    children = session.child_usage if session is not None else None
    gaps_list: list[str] = []
    if parent.source is None:
        gaps_list.append("no parent stream or transcript")
    if stream is not None and stream.cut_short and parent.source == "stream":
        gaps_list.append("the parent's stream was cut short mid-turn")
    if not parent.tally.exact or (session is not None and not session.child_usage_exact):
        gaps_list.append("transcripts under-count output tokens (no usage report)")
    missing = _unrecorded_children(evidence)
    if missing:
        shown = ", ".join(missing[:3]) + (
            f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        gaps_list.append(f"spawned children without a transcript: {shown}")
    if unseen:
        gaps_list.append(unseen)
    total = parent.tally.usage if children is None else parent.tally.usage + children
    cost = parent.tally.cost_usd  # the agent prices the children only when it prices at all
    if cost is not None and session is not None and session.child_cost_usd is not None:
        cost += session.child_cost_usd
    return UsageSummary(
        total=total,
        by_model=dict(evidence.usage_by_model),
        parent=parent.tally.usage,
        children=children,
        complete=not gaps_list,
        source=f"parent {parent.source or 'none'} + children's usage in the transcripts",
        gaps=tuple(gaps_list),
        agent_reported_cost_usd=cost,
    )


def model_reached(usage: UsageTally) -> bool:
    """Whether at least one assistant message did not end in ``error`` / ``aborted``.

    Stops an infrastructure failure (bad credentials, an unreachable provider: the CLI
    still exits 0) from passing as an agent attempt; such a run is an error, not a score.
    """
    return usage.assistant_messages > usage.failed_assistant_messages

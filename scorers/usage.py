"""Usage and efficiency: reported, never gating, except that the model must be reached.

The parent's own turns and tokens come from its live event stream; only when that stream
holds no readable event at all (missing, empty, garbage) do they come from the parent
transcript instead, never from both. Children's tokens come from the transcript's usage
attribution entries.
"""

from __future__ import annotations

from dataclasses import dataclass

from scorers.records import SessionParse, StreamParse, UsageSource, UsageTally


@dataclass(frozen=True, slots=True)
class UsageResult:
    """The parent's usage from one source, plus attributed child tokens."""

    source: UsageSource | None
    parent: UsageTally
    child_tokens: int

    @property
    def tokens_used(self) -> int:
        return self.parent.tokens + self.child_tokens


def choose_usage(stream: StreamParse | None, session: SessionParse | None) -> UsageResult:
    """Take the parent's usage from the stream, else from the transcript.

    Stops double counting: the transcript repeats the stream's assistant messages, so
    adding both sources would inflate turns and tokens.
    """
    child_tokens = session.child_tokens if session is not None else 0
    if stream is not None and stream.events > 0:
        return UsageResult("stream", stream.usage, child_tokens)
    if session is not None:
        return UsageResult("transcript", session.usage, child_tokens)
    return UsageResult(None, UsageTally(), child_tokens)


def model_reached(usage: UsageTally) -> bool:
    """Whether at least one assistant message did not end in ``error`` / ``aborted``.

    Stops an infrastructure failure (bad credentials, an unreachable provider: the CLI
    still exits 0) from passing as an agent attempt; such a run is an error, not a score.
    """
    return usage.assistant_messages > usage.failed_assistant_messages

"""Usage and efficiency: reported, never gating, except that the model must be reached.

The parent's own turns and tokens come from one source, never from both: its live event
stream, unless the parent transcript holds more assistant messages. The transcript holds
everything the stream has, and more when the parent kept working after the CLI's stream had
ended (children torn down at exit wake it with notices, and it answers them); a stream with
no readable event (missing, empty, garbage) leaves the transcript as the only source.
Children's tokens come from the transcript's usage attribution entries.
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
    """Take the parent's usage from the more complete of the stream and the transcript.

    Stops double counting: the transcript repeats the stream's assistant messages, so
    adding both sources would inflate turns and tokens. Stops under-counting too: a parent
    that kept working after the stream ended has turns only the transcript saw. On a tie
    the stream wins (it is written live, so it survives a transcript cut short).
    """
    child_tokens = session.child_tokens if session is not None else 0
    streamed = stream.usage.assistant_messages if stream is not None else 0
    if session is not None and session.usage.assistant_messages > streamed:
        return UsageResult("transcript", session.usage, child_tokens)
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

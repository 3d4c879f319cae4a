"""Token counts: the four billed fields, a session's tally of them, and an agent's own
account of a whole run (agent-neutral records, like :mod:`scorers.records`)."""

from __future__ import annotations

from dataclasses import dataclass

from scorers.faults import ProviderFault


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens of one or more model calls in the four disjoint fields providers bill:
    ``input_tokens`` is the uncached input only; tokens read from and written to the
    prompt cache are input too, counted apart. ``reasoning_tokens`` is the part of
    ``output_tokens`` the model spent reasoning, where the agent reports it (None: not
    reported)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int | None = None

    @property
    def total(self) -> int:
        """Every token billed: the four fields (reasoning is inside the output)."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    def __add__(self, other: TokenUsage) -> TokenUsage:
        reasoning = (
            None
            if self.reasoning_tokens is None and other.reasoning_tokens is None
            else (self.reasoning_tokens or 0) + (other.reasoning_tokens or 0)
        )
        return TokenUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            reasoning,
        )


NO_TOKENS = TokenUsage()


@dataclass(frozen=True, slots=True)
class UsageTally:
    """Assistant messages of one session (the parent's, or a child's), as one source
    recorded them.

    ``exact`` is False when the source is known to under-count (Claude Code's transcripts
    keep the streaming placeholder of each message's output tokens); ``cost_usd`` is what
    the agent itself priced the messages at (None: it does not say).

    ``faults`` are the session's model calls that failed at the provider (retried or not);
    ``ended_in_fault`` says its last model call was one of them (the agent gave up there);
    ``unseen_calls`` counts calls that ended mid-answer or were aborted with no usage
    recorded: the provider may have billed them, so the tally is then a lower bound.
    """

    assistant_messages: int = 0
    failed_assistant_messages: int = 0
    usage: TokenUsage = NO_TOKENS
    first_error: str | None = None
    exact: bool = True
    cost_usd: float | None = None
    faults: tuple[ProviderFault, ...] = ()
    ended_in_fault: bool = False
    unseen_calls: int = 0

    @property
    def tokens(self) -> int:
        return self.usage.total


@dataclass(frozen=True, slots=True)
class ReportedUsage:
    """The agent's own account of a whole run's usage (parent, subagents and internal
    calls), per model as it names them, e.g. Claude Code's ``result`` events
    (``modelUsage``, cumulative: the last one holds the run)."""

    by_model: tuple[tuple[str, TokenUsage], ...]
    cost_usd: float | None = None

    @property
    def total(self) -> TokenUsage:
        found = NO_TOKENS
        for _model, usage in self.by_model:
            found = found + usage
        return found

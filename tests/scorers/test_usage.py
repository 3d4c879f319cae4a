"""Usage: turns and tokens from the stream (else the transcript), child usage, errors, and
whether the evidence holds all of it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from scorer_builders import Stream, Transcript, assistant_message, jsonl

from scorers.prime_agent.session import parse_session
from scorers.prime_agent.stream import parse_stream
from scorers.records import (
    LedgerParse,
    RunEvidence,
    SessionParse,
    SpawnEvent,
    StreamParse,
    TokenUsage,
    UsageTally,
)
from scorers.usage import ParentUsage, model_reached, parent_usage, summarize_usage


def shape(tally: UsageTally) -> tuple[int, int, int, str | None]:
    """Messages, failed ones, tokens and the first error of a tally."""
    return (
        tally.assistant_messages,
        tally.failed_assistant_messages,
        tally.tokens,
        tally.first_error,
    )


def evidence(
    stream: StreamParse | None, session: SessionParse | None, spawned: tuple[str, ...] = ()
) -> RunEvidence:
    events = tuple(SpawnEvent(c, f"p/{c}", c, "p", 1, c, "") for c in spawned)
    return RunEvidence(
        parent_paths=("p",),
        ledger=LedgerParse(events),
        session=session,
        stream=stream,
        answers=None,
        child_sessions=(),
        child_session_dirs=0,
    )


def summary(stream: StreamParse | None, session: SessionParse | None):  # type: ignore[no-untyped-def]
    return summarize_usage(evidence(stream, session), parent_usage(stream, session))


def test_turns_count_assistant_message_end_only() -> None:
    parsed = parse_stream(io.BytesIO(Stream().assistant(100).assistant(50, stop="stop").data))
    # each builder turn also emits a user message_end, message_start/update and turn_end
    assert shape(parsed.usage) == (2, 0, 150, None)
    assert parsed.usage.usage == TokenUsage(148, 2)
    assert parsed.malformed_lines == 0


def test_turn_end_alone_is_never_counted() -> None:
    data = jsonl({"type": "turn_end", "message": assistant_message(100)})
    assert parse_stream(io.BytesIO(data)).usage == UsageTally()


def test_failed_messages_and_the_first_error() -> None:
    stream = (
        Stream()
        .assistant(0, stop="error", error="429 rate limited")
        .assistant(10, stop="aborted", error="Request was aborted")
        .assistant(100, stop="stop")
    )
    usage = parse_stream(io.BytesIO(stream.data)).usage
    assert shape(usage) == (3, 2, 110, "429 rate limited")
    assert model_reached(usage)


def test_a_failure_without_error_text_does_not_hide_a_later_one() -> None:
    stream = Stream().assistant(0, stop="error").assistant(0, stop="error", error="401 nope")
    usage = parse_stream(io.BytesIO(stream.data)).usage
    assert (usage.failed_assistant_messages, usage.first_error) == (2, "401 nope")
    assert not model_reached(usage)


@pytest.mark.parametrize(
    "usage",
    [
        pytest.param(UsageTally(), id="no-messages"),
        pytest.param(UsageTally(2, 2, TokenUsage(), "401"), id="all-failed"),
    ],
)
def test_model_not_reached(usage: UsageTally) -> None:
    assert not model_reached(usage)


@pytest.mark.parametrize(
    ("event", "tokens"),
    [
        pytest.param({"type": "message_end", "message": []}, 0, id="message-list"),
        pytest.param({"type": "message_end", "message": "hi"}, 0, id="message-string"),
        pytest.param({"type": 5}, 0, id="type-int"),
        pytest.param({"message": {}}, 0, id="no-type"),
        pytest.param(["message_end"], 0, id="top-level-list"),
        pytest.param(
            {
                "type": "message_end",
                "message": {"role": "assistant", "usage": {"input": "9"}},
            },
            0,
            id="tokens-string",
        ),
        pytest.param(
            {"type": "message_end", "message": {"role": "assistant", "usage": []}},
            0,
            id="usage-list",
        ),
        pytest.param(
            {"type": "message_end", "message": {"role": "assistant", "usage": {"output": -5}}},
            0,
            id="tokens-negative",
        ),
        pytest.param(
            {
                "type": "message_end",
                "message": {"role": "assistant", "usage": {"input": 7}, "stopReason": 1},
            },
            7,
            id="stop-reason-int",
        ),
    ],
)
def test_ill_typed_events_are_counted_malformed(event: object, tokens: int) -> None:
    parsed = parse_stream(io.BytesIO(json.dumps(event).encode() + b"\n"))
    assert (parsed.malformed_lines, parsed.usage.tokens) == (1, tokens)


def test_missing_usage_is_zero_tokens_not_malformed() -> None:
    event = {"type": "message_end", "message": {"role": "assistant", "stopReason": "stop"}}
    parsed = parse_stream(io.BytesIO(jsonl(event)))
    assert (parsed.usage, parsed.malformed_lines) == (UsageTally(1, 0, TokenUsage(), None), 0)


def transcript_with_usage() -> Transcript:
    return (
        Transcript()
        .assistant(300)
        .assistant(0, stop="error", error="overloaded")
        .child_usage(40, aggregate=1)
        .child_usage(2, aggregate=1)
    )


def test_child_usage_adds_up_child_usage_not_aggregate_usage() -> None:
    parsed = parse_session(io.BytesIO(transcript_with_usage().data))
    assert parsed.child_usage == TokenUsage(42)
    assert shape(parsed.usage) == (2, 1, 300, "overloaded")


def test_the_stream_is_preferred_on_a_tie_and_never_added_to_the_transcript() -> None:
    session = parse_session(io.BytesIO(transcript_with_usage().data))
    stream = parse_stream(io.BytesIO(Stream().assistant(1000).assistant(7).data))
    parent = parent_usage(stream, session)
    usage = summarize_usage(evidence(stream, session), parent)
    assert (parent.source, shape(parent.tally)) == ("stream", (2, 0, 1007, None))
    assert usage.children == TokenUsage(42) and usage.total.total == 1049
    assert usage.parent == parent.tally.usage and usage.complete


@pytest.mark.parametrize(
    "stream",
    [
        # The CLI exited after one turn; the worker then woke the parent with the notices
        # of its torn-down children and it answered: turns only the transcript saw.
        pytest.param(Stream().assistant(1000), id="stream-ended-before-the-parent"),
        pytest.param(Stream(), id="stream-without-messages"),
    ],
)
def test_a_more_complete_transcript_is_the_source(stream: Stream) -> None:
    session = parse_session(io.BytesIO(transcript_with_usage().data))
    parsed = parse_stream(io.BytesIO(stream.data))
    parent = parent_usage(parsed, session)
    assert (parent.source, shape(parent.tally)) == ("transcript", (2, 1, 300, "overloaded"))
    assert summary(parsed, session).total.total == 342


@pytest.mark.parametrize(
    "stdout",
    [
        pytest.param(None, id="missing"),
        pytest.param(b"", id="empty"),
        pytest.param(b"\n\n", id="blank"),
        pytest.param(b"garbage\n\xff\n[1]\n", id="garbage-only"),
        pytest.param(b'{"type":"session","version":3,"id":"x"}\n', id="header-only"),
    ],
)
def test_without_stream_events_the_transcript_is_used(stdout: bytes | None) -> None:
    session = parse_session(io.BytesIO(transcript_with_usage().data))
    stream = parse_stream(io.BytesIO(stdout)) if stdout is not None else None
    parent = parent_usage(stream, session)
    assert (parent.source, parent.tally.tokens, parent.tally.first_error) == (
        "transcript",
        300,
        "overloaded",
    )


def test_a_stream_with_events_but_no_messages_is_the_source_without_a_transcript() -> None:
    parent = parent_usage(parse_stream(io.BytesIO(Stream().data)), None)
    assert parent == ParentUsage("stream", UsageTally())


def test_no_source_at_all_is_no_usage_and_not_complete() -> None:
    assert parent_usage(None, None) == ParentUsage(None, UsageTally())
    usage = summary(None, None)
    assert (usage.total.total, usage.complete) == (0, False)
    assert usage.gaps == ("no parent stream or transcript",)


def test_a_spawned_child_without_a_transcript_makes_a_lower_bound() -> None:
    """The early-exit case: a child torn down before its session file existed was billed
    for its requests, and nothing on disk records them."""
    session = parse_session(io.BytesIO(transcript_with_usage().data))
    stream = parse_stream(io.BytesIO(Stream().assistant(1000).assistant(7).data))
    found = summarize_usage(
        evidence(stream, session, spawned=("c1",)), parent_usage(stream, session)
    )
    assert not found.complete
    assert found.gaps == ("spawned children without a transcript: c1",)


def test_a_stream_cut_short_mid_turn_makes_a_lower_bound() -> None:
    stream = parse_stream(io.BytesIO(Stream().assistant(10).cut().data))
    assert stream.cut_short
    assert summary(stream, None).gaps == ("the parent's stream was cut short mid-turn",)
    closed = parse_stream(io.BytesIO(Stream().assistant(10).data))
    assert not closed.cut_short and summary(closed, None).complete


def test_the_agents_cost_is_kept_beside() -> None:
    message = assistant_message(100)
    message["usage"] = {"input": 90, "output": 10, "cost": {"total": 0.25}}
    stream = parse_stream(io.BytesIO(jsonl({"type": "message_end", "message": message})))
    assert stream.usage.cost_usd == 0.25
    assert summary(stream, None).agent_reported_cost_usd == 0.25


def test_real_stream_counts_message_end_not_turn_end(real_runs: Path) -> None:
    with (real_runs / "run1" / "cli.stdout.jsonl").open("rb") as stream:
        parsed = parse_stream(stream)
    assert (parsed.usage.assistant_messages, parsed.usage.tokens) == (6, 6462)
    assert parsed.usage.usage == TokenUsage(6000, 462)
    assert parsed.malformed_lines == 0

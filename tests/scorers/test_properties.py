"""Property tests: no input bytes, and no valid JSON of the wrong shape, make a parser raise."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scorer_builders import MANIFEST, PARENT_FILE, opener

from scorers.artifact import parse_artifact
from scorers.prime_agent import (
    ChildSessionFile,
    PrimeAgentArtifacts,
    parse_ledger,
    parse_session,
    parse_stream,
    score_prime_agent,
)

#: Hypothesis over the whole scorer: many examples (seconds each).
pytestmark = pytest.mark.slow

PARSERS: list[Callable[[io.BytesIO], object]] = [
    parse_ledger,
    parse_session,
    parse_stream,
    parse_artifact,
]

#: Bytes biased towards line structure and the bytes that break decoders.
chunks = st.one_of(
    st.binary(max_size=64),
    st.sampled_from([b"\n", b"\r\n", b"\x00", b"\xff", b"\xc3", b"{", b"}", b'"', b"[", b"- a: 1"]),
)
raw_bytes = st.lists(chunks, max_size=40).map(b"".join)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
#: Every key any parser reads, so that wrong-typed values reach every field check.
KEYS = [
    "v", "op", "at", "childId", "parent", "child", "depth", "name", "reason", "sessionsDir",
    "type", "id", "customType", "details", "from", "sessionId", "fromRelationship", "kind",
    "childUsage", "totalTokens", "message", "role", "usage", "stopReason", "errorMessage",
]  # fmt: skip
records = st.one_of(
    json_values,
    st.dictionaries(st.sampled_from(KEYS), json_values, max_size=8),
    st.fixed_dictionaries(
        {"v": st.just(1), "op": st.sampled_from(["spawn", "rename", "delete", "meta", "x"])},
        optional={k: json_values for k in KEYS[2:10]},
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["custom_message", "message_end", "message", "session"])},
        optional={k: json_values for k in KEYS[11:]},
    ),
)
json_lines = st.lists(records, max_size=12).map(
    lambda rs: b"".join(json.dumps(r).encode() + b"\n" for r in rs)
)

#: Generating nested JSON dominates these tests' time; these counts keep the suite quick.
BYTES_SETTINGS = settings(max_examples=300, deadline=None)
SHAPE_SETTINGS = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@BYTES_SETTINGS
@given(data=raw_bytes)
def test_parsers_survive_arbitrary_bytes(data: bytes) -> None:
    for parse in PARSERS:
        parse(io.BytesIO(data))


@SHAPE_SETTINGS
@given(data=json_lines, tail=st.binary(max_size=16))
def test_parsers_survive_json_of_the_wrong_shape(data: bytes, tail: bytes) -> None:
    for parse in PARSERS:
        parse(io.BytesIO(data + tail))


@SHAPE_SETTINGS
@given(ledger=json_lines, transcript=json_lines, stdout=raw_bytes, artifact=raw_bytes)
def test_the_whole_scorer_survives_and_round_trips(
    ledger: bytes, transcript: bytes, stdout: bytes, artifact: bytes
) -> None:
    artifacts = PrimeAgentArtifacts(
        parent_session_paths=(PARENT_FILE, ""),
        ledger=opener(ledger),
        parent_transcript=opener(transcript),
        stdout=opener(stdout),
        artifact=opener(artifact),
        child_sessions=(ChildSessionFile(("sub-1",), "s.jsonl"), ChildSessionFile((), "x")),
    )
    score = score_prime_agent(artifacts, MANIFEST)
    assert type(score).from_dict(json.loads(json.dumps(score.to_dict()))) == score

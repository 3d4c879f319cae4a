"""Property tests over the whole scorer: deterministic, and blind to irrelevant noise.

An honest artifact set must stay resolved, with the same rubric figures, when lines the
rubric does not read are inserted anywhere: unknown ledger ops, malformed lines, another
root's edges, unrelated transcript entries and sibling messages, other stdout events, and
prose in the artifact.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scorer_builders import AT, MANIFEST, OTHER_PARENT_FILE, WORKERS, child_path, honest_run, jsonl

from scorers.prime_agent import score_prime_agent

NOISE_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

text = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), max_size=20)

ledger_noise = st.one_of(
    st.builds(
        lambda op, t: jsonl({"v": 1, "op": op, "at": AT, "note": t}),
        st.sampled_from(["gc", "heartbeat", "x-future"]),
        text,
    ),
    st.sampled_from(
        [b"{not json\n", b"\x00\xff\n", b"[1, 2]\n", b'{"v": 2, "op": "spawn"}\n', b'"str"\n']
    ),
    st.builds(
        lambda i, w: jsonl(
            {
                "v": 1,
                "op": "spawn",
                "at": AT,
                "childId": f"sub-other{i}",
                "parent": OTHER_PARENT_FILE,
                "child": child_path(f"sub-other{i}", "other-root"),
                "depth": 1,
                "name": w,
            }
        ),
        st.integers(0, 99),
        st.sampled_from([*WORKERS, "helper"]),
    ),
    st.builds(
        lambda i: jsonl(
            {
                "v": 1,
                "op": "rename",
                "at": AT,
                "childId": f"sub-ghost{i}",
                "child": "/nowhere",
                "name": "x",
            }
        ),
        st.integers(0, 9),
    ),
)
transcript_noise = st.one_of(
    st.builds(
        lambda t: jsonl({"type": "custom_message", "customType": "note", "details": {"text": t}}),
        text,
    ),
    st.builds(
        lambda t: jsonl(
            {
                "type": "custom_message",
                "customType": "agent_message",
                "details": {
                    "message": t,
                    "from": {"sessionId": "peer"},
                    "fromRelationship": "sibling",
                },
            }
        ),
        text,
    ),
    st.builds(
        lambda t: jsonl({"type": "message", "message": {"role": "user", "content": t}}), text
    ),
    st.sampled_from([b"garbage\n", b"\x00\n", b"{}\n", b"null\n"]),
)
stream_noise = st.one_of(
    st.sampled_from(
        [
            jsonl({"type": "tool_execution_start", "toolName": "ipython"}),
            jsonl({"type": "rlm_child_update", "child": {"id": "sub-x", "status": "running"}}),
            jsonl({"type": "turn_start"}),
            b"not json at all\n",
        ]
    ),
)
artifact_noise = st.one_of(
    st.builds(lambda t: ("# " + t + "\n").encode(), text),
    st.builds(lambda t: ("Some prose: " + t + "\n").encode(), text),
    st.sampled_from(
        [b"\n", b"- not-a-shard.txt: 99\n", b"  indented text\n", b"* other-file.csv: 1\n"]
    ),
)


def _sprinkle(data: bytes, noise: list[tuple[int, bytes]], keep_first: bool) -> bytes:
    """Insert noise lines between existing lines (after the first line when it is a header)."""
    lines = data.splitlines(keepends=True)
    start = 1 if keep_first else 0
    for position, line in noise:
        at = start + position % (len(lines) - start + 1)
        lines.insert(at, line)
    return b"".join(lines)


def placed(strategy: st.SearchStrategy[bytes]) -> st.SearchStrategy[list[tuple[int, bytes]]]:
    return st.lists(st.tuples(st.integers(0, 1000), strategy), max_size=12)


RUBRIC = (
    "resolved",
    "checks",
    "missing_shards",
    "wrong_answers",
    "verified_shard_workers",
    "duplicate_spawns",
    "total_spawns",
    "missing_receipts",
    "live_depth1_edges",
)


@pytest.mark.slow
@NOISE_SETTINGS
@given(placed(ledger_noise), placed(transcript_noise), placed(stream_noise), placed(artifact_noise))
def test_honest_run_stays_resolved_under_noise(ledger, transcript, stream, artifact) -> None:
    clean = honest_run()
    baseline = clean.score()
    assert baseline.resolved
    noisy = honest_run()
    assert noisy.ledger is not None and noisy.transcript is not None and noisy.stream is not None
    noisy.ledger.data = _sprinkle(noisy.ledger.data, ledger, keep_first=False)
    noisy.transcript.data = _sprinkle(noisy.transcript.data, transcript, keep_first=True)
    noisy.stream.data = _sprinkle(noisy.stream.data, stream, keep_first=False)
    art = noisy.artifact.encode() if isinstance(noisy.artifact, str) else noisy.artifact
    assert art is not None
    noisy.artifact = _sprinkle(art, artifact, keep_first=False)
    score = noisy.score()
    assert score.resolved, score.failures
    for name in RUBRIC:
        assert getattr(score, name) == getattr(baseline, name), name


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(placed(ledger_noise | transcript_noise | stream_noise), st.integers(0, 3))
def test_verdicts_are_deterministic(noise, which) -> None:
    run = honest_run()
    target = [run.ledger, run.transcript, run.stream][min(which, 2)]
    assert target is not None
    target.data = _sprinkle(target.data, noise, keep_first=which == 1)
    artifacts = run.artifacts()
    first = score_prime_agent(artifacts, MANIFEST)
    second = score_prime_agent(artifacts, MANIFEST)
    assert json.dumps(first.to_dict(), sort_keys=True) == json.dumps(
        second.to_dict(), sort_keys=True
    )

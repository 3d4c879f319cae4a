"""ItemScore: exact JSON round trip, and strict reading of saved scores."""

from __future__ import annotations

import json
import math
from dataclasses import fields, replace

import pytest
from scorer_builders import CORRECT_ARTIFACT, honest_run

from scorers import SCORE_SCHEMA_VERSION, DuplicateSpawn, ItemScore, WrongAnswer

EXPECTED_FIELDS = [
    "missing_shards",
    "wrong_answers",
    "live_depth1_edges",
    "distinct_worker_names",
    "child_session_dirs",
    "verified_shard_workers",
    "unverified_shard_workers",
    "duplicate_spawns",
    "duplicate_spawn_details",
    "total_spawns",
    "spawn_budget",
    "missing_receipts",
    "untraced_shards",
    "untraced_shard_details",
    "ledger_malformed_lines",
    "ledger_unknown_ops",
    "ledger_torn_tail",
    "transcript_malformed_lines",
    "child_session_malformed_lines",
    "stdout_malformed_lines",
    "tokens_used",
    "turns",
    "assistant_messages",
    "failed_assistant_messages",
    "model_reached",
    "agent_error",
    "parent_session_id",
    "checks",
    "usage",
    "efficiency",
    "schema_version",
]


def busy_score() -> ItemScore:
    """A score with every nested kind populated."""
    score = replace(honest_run(), artifact=CORRECT_ARTIFACT + "- shard-a.txt: 4\n").score()
    return replace(
        score,
        duplicate_spawn_details=(DuplicateSpawn("sub-2", "w", "sub-1", "t"),),
        wrong_answers=(*score.wrong_answers, WrongAnswer("x.txt", "north", ("south",))),
        agent_error="boom",
    )


def test_the_field_names_are_the_contract() -> None:
    assert [f.name for f in fields(ItemScore)] == EXPECTED_FIELDS
    assert busy_score().schema_version == SCORE_SCHEMA_VERSION
    assert busy_score().untraced_shard_details  # every nested kind really is populated
    assert busy_score().usage.children is not None and busy_score().efficiency.shards


def test_round_trip_through_json_is_exact() -> None:
    score = busy_score()
    data = json.loads(json.dumps(score.to_dict()))
    assert ItemScore.from_dict(data) == score
    assert data["wrong_answers"][0] == {
        "file": "shard-a.txt",
        "expected": 3,
        "got": ["3 words", "4"],
    }
    assert isinstance(data["missing_shards"], list)
    assert data["untraced_shard_details"] == [
        {
            "file": "shard-a.txt",
            "reason": "no reply from worker-shard-a (sub-worker-shard-a) states '4'",
        }
    ]


def plain(value: object) -> bool:
    """Only the types ``json.loads`` itself produces (no tuples, no dataclasses, no NaN)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain(item) for item in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool)


def test_to_dict_is_plain_json() -> None:
    data = busy_score().to_dict()
    assert plain(data)
    assert data == json.loads(json.dumps(data, allow_nan=False))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"model_reached": "yes"}, "ItemScore.model_reached", id="bool-as-string"),
        pytest.param({"turns": True}, "ItemScore.turns", id="bool-as-int"),
        pytest.param({"turns": 1.0}, "ItemScore.turns", id="float-as-int"),
        pytest.param({"missing_shards": "a.txt"}, "ItemScore.missing_shards", id="string-list"),
        pytest.param({"missing_receipts": [1]}, "ItemScore.missing_receipts[0]", id="list-item"),
        pytest.param(
            {"checks": [{"name": "coverage", "passed": "no"}]},
            "ItemScore.checks[0]: unknown fields [], missing fields",
            id="check-missing-fields",
        ),
        pytest.param({"agent_error": 5}, "ItemScore.agent_error", id="optional-string"),
        pytest.param(
            {"wrong_answers": [{"file": "a", "expected": 1.5, "got": []}]},
            "ItemScore.wrong_answers[0].expected",
            id="nested-field",
        ),
        pytest.param(
            {"duplicate_spawn_details": [{"child_id": "a"}]},
            "ItemScore.duplicate_spawn_details[0]: unknown fields [], missing fields",
            id="nested-missing",
        ),
        pytest.param({"surprise": 1}, "unknown fields ['surprise']", id="unknown-field"),
        pytest.param({"schema_version": 99}, "schema_version: 99", id="schema-version"),
    ],
)
def test_from_dict_rejects_what_it_cannot_trust(change: dict[str, object], message: str) -> None:
    data = busy_score().to_dict() | change
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ItemScore.from_dict(data)


def test_from_dict_rejects_a_missing_field_and_a_non_object() -> None:
    data = busy_score().to_dict()
    del data["turns"]
    with pytest.raises(ValueError, match="missing fields \\['turns'\\]"):
        ItemScore.from_dict(data)
    with pytest.raises(ValueError, match="expected an object"):
        ItemScore.from_dict([])

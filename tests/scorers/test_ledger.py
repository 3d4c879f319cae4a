"""Parsing the spawn ledger: what is an event, what is malformed, what is a torn tail."""

from __future__ import annotations

import io
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers.prime_agent import ledger
from scorers.prime_agent.ledger import parse_ledger
from scorers.records import DeleteEvent, LedgerParse, RenameEvent, SpawnEvent

SPAWN = {
    "v": 1,
    "op": "spawn",
    "at": "2026-11-29T18:59:42.476Z",
    "childId": "sub-1",
    "parent": "/s/sessions/p.jsonl",
    "child": "/s/session-artifacts/root/sub-1/abc.jsonl",
    "depth": 1,
    "name": "worker-a",
}
RENAME = {"v": 1, "op": "rename", "at": "t", "childId": "sub-1", "child": "/c.jsonl", "name": "n"}
DELETE = {"v": 1, "op": "delete", "at": "t", "childId": "sub-1", "child": "/c.jsonl"}
META = {"v": 1, "op": "meta", "at": "t", "sessionsDir": "/s/sessions"}


def parse(*lines: bytes | dict[str, object]) -> LedgerParse:
    data = b"".join(
        (json.dumps(line).encode() if isinstance(line, dict) else line) + b"\n" for line in lines
    )
    return parse_ledger(io.BytesIO(data))


def test_a_spawn_becomes_an_event_with_normalised_paths() -> None:
    assert parse(SPAWN).events == (
        SpawnEvent(
            child_id="sub-1",
            child="s/session-artifacts/root/sub-1/abc.jsonl",
            child_session_id="abc",
            parent="s/sessions/p.jsonl",
            depth=1,
            name="worker-a",
            at="2026-11-29T18:59:42.476Z",
        ),
    )


def test_rename_delete_and_meta() -> None:
    result = parse(META, RENAME, DELETE, DELETE | {"reason": "whatever-new-reason"})
    assert result.events == (
        RenameEvent("sub-1", "c.jsonl", "n", "t"),
        DeleteEvent("sub-1", "c.jsonl", "t"),
        DeleteEvent("sub-1", "c.jsonl", "t"),
    )
    assert (result.malformed_lines, result.unknown_ops, result.torn_tail) == (0, 0, False)


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(SPAWN | {"depth": "1"}, id="depth-string"),
        pytest.param(SPAWN | {"depth": True}, id="depth-bool"),
        pytest.param(SPAWN | {"depth": 1.0}, id="depth-float"),
        pytest.param(SPAWN | {"depth": 0}, id="depth-zero"),
        pytest.param(SPAWN | {"depth": -1}, id="depth-negative"),
        pytest.param({k: v for k, v in SPAWN.items() if k != "depth"}, id="depth-missing"),
        pytest.param(SPAWN | {"name": None}, id="name-null"),
        pytest.param(SPAWN | {"parent": ["/p"]}, id="parent-list"),
        pytest.param(SPAWN | {"child": {"path": "/c"}}, id="child-object"),
        pytest.param(SPAWN | {"childId": 7}, id="child-id-int"),
        pytest.param(SPAWN | {"v": True}, id="v-bool"),
        pytest.param(SPAWN | {"v": 1.0}, id="v-float"),
        pytest.param(SPAWN | {"v": 2}, id="v-2"),
        pytest.param(SPAWN | {"v": "1"}, id="v-string"),
        pytest.param(SPAWN | {"at": 1764442782}, id="at-number"),
        pytest.param({k: v for k, v in SPAWN.items() if k != "at"}, id="at-missing"),
        pytest.param(SPAWN | {"op": ["spawn"]}, id="op-list"),
        pytest.param(RENAME | {"name": 5}, id="rename-name-int"),
        pytest.param({k: v for k, v in RENAME.items() if k != "child"}, id="rename-no-child"),
        pytest.param(DELETE | {"reason": 5}, id="delete-reason-int"),
        pytest.param(DELETE | {"childId": None}, id="delete-child-id-null"),
        pytest.param(META | {"sessionsDir": None}, id="meta-no-sessions-dir"),
        pytest.param([SPAWN], id="top-level-list"),
        pytest.param("spawn", id="top-level-string"),
        pytest.param(None, id="top-level-null"),
    ],
)
def test_ill_typed_records_are_malformed(record: object) -> None:
    result = parse(json.dumps(record).encode())
    assert (result.events, result.malformed_lines, result.unknown_ops) == ((), 1, 0)


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b"\x00", id="nul"),
        pytest.param(b"\xff\xfe\xfd", id="bad-utf8"),
        pytest.param(b'{"v":1,', id="truncated"),
        pytest.param(b"garbage", id="not-json"),
    ],
)
def test_undecodable_lines_are_malformed(line: bytes) -> None:
    result = parse(line, SPAWN)
    assert (len(result.events), result.malformed_lines) == (1, 1)


def test_unknown_ops_are_tolerated_not_malformed() -> None:
    result = parse({"v": 1, "op": "checkpoint", "at": "t", "extra": [1, 2]}, SPAWN)
    assert (len(result.events), result.unknown_ops, result.malformed_lines) == (1, 1, 0)


def test_an_unknown_op_still_needs_v_and_at() -> None:
    result = parse({"v": 1, "op": "checkpoint"}, {"v": 2, "op": "checkpoint", "at": "t"})
    assert (result.unknown_ops, result.malformed_lines) == (0, 2)


def test_blank_lines_are_neither_events_nor_malformed() -> None:
    result = parse(b"", b"   ", SPAWN, b"\r")
    assert (len(result.events), result.malformed_lines) == (1, 0)


def test_a_torn_final_line_is_flagged_not_counted() -> None:
    data = json.dumps(SPAWN).encode() + b'\n{"v":1,"op":"spawn","at":"t","chi'
    result = parse_ledger(io.BytesIO(data))
    assert (len(result.events), result.malformed_lines, result.torn_tail) == (1, 0, True)


def test_a_valid_final_line_without_newline_is_applied() -> None:
    data = json.dumps(META).encode() + b"\n" + json.dumps(SPAWN).encode()
    result = parse_ledger(io.BytesIO(data))
    assert (len(result.events), result.malformed_lines, result.torn_tail) == (1, 0, False)


def test_an_ill_typed_final_line_without_newline_is_a_torn_tail() -> None:
    data = json.dumps(SPAWN).encode() + b"\n" + json.dumps(SPAWN | {"depth": "1"}).encode()
    result = parse_ledger(io.BytesIO(data))
    assert (len(result.events), result.malformed_lines, result.torn_tail) == (1, 0, True)


def test_a_bad_line_in_the_middle_is_malformed_not_torn() -> None:
    result = parse(SPAWN, b'{"v":1,"op":"sp', SPAWN)
    assert (len(result.events), result.malformed_lines, result.torn_tail) == (2, 1, False)


def test_crlf_line_endings_are_accepted() -> None:
    data = json.dumps(META).encode() + b"\r\n" + json.dumps(SPAWN).encode() + b"\r\n"
    result = parse_ledger(io.BytesIO(data))
    assert (len(result.events), result.malformed_lines) == (1, 0)


def test_the_real_run_ledger_parses_cleanly(real_runs: Path) -> None:
    path = next((real_runs / "run1" / "rlm-ledger").glob("*.jsonl"))
    with path.open("rb") as stream:
        result = parse_ledger(stream)
    assert [event.name for event in result.events] == [
        "worker-shard-a",
        "worker-shard-b",
        "worker-shard-c",
    ]
    assert (result.malformed_lines, result.unknown_ops, result.torn_tail) == (0, 0, False)


# ------------------------------------------------------------------- one parser, any form


def compact(record: dict[str, object]) -> bytes:
    """A record as the product writes it: compact, keys in the contract's order."""
    return json.dumps(record, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(SPAWN, id="spawn"),
        pytest.param(SPAWN | {"depth": 12, "name": ""}, id="spawn-deep-unnamed"),
        pytest.param(RENAME, id="rename"),
        pytest.param(DELETE, id="delete"),
        pytest.param(DELETE | {"reason": "revoked"}, id="delete-with-reason"),
    ],
)
def test_compact_and_spaced_lines_parse_alike(record: dict[str, object]) -> None:
    spaced = parse(json.dumps(record).encode())
    assert parse(compact(record)) == spaced
    assert len(spaced.events) == 1


@pytest.mark.parametrize(
    ("record", "valid"),
    [
        pytest.param(SPAWN | {"name": 'a"b'}, True, id="escaped-quote"),
        pytest.param(SPAWN | {"name": "a\\b"}, True, id="escaped-backslash"),
        pytest.param(SPAWN | {"name": "\x1f"}, True, id="control-character"),
        pytest.param(SPAWN | {"name": "é"}, True, id="non-ascii"),
        pytest.param(SPAWN | {"depth": 10**19}, True, id="long-depth"),
        pytest.param(SPAWN | {"depth": 0}, False, id="depth-zero"),
        pytest.param(SPAWN | {"extra": 1}, True, id="extra-field"),
        pytest.param(
            {"v": 1, "op": "delete", "childId": "c", "at": "t", "child": "/c"}, True, id="order"
        ),
        pytest.param(DELETE | {"reason": None}, False, id="reason-null"),
    ],
)
def test_unusual_but_valid_json_is_judged_field_by_field(
    record: dict[str, object], valid: bool
) -> None:
    result = parse(compact(record))
    assert (len(result.events), result.malformed_lines) == ((1, 0) if valid else (0, 1))
    if valid and "name" in record:
        assert result.events[0].name == record["name"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(
            b'{"v":1,"op":"delete","at":"t","childId":"c","child":"/c","reason":"a"b"}', id="quote"
        ),
        pytest.param(
            b'{"v":1,"op":"rename","at":"t","childId":"c","child":"/c","name":"a\\x"}',
            id="bad-escape",
        ),
        pytest.param(
            b'{"v":1,"op":"rename","at":"t","childId":"c","child":"/c","name":"\x01"}', id="control"
        ),
        pytest.param(
            b'{"v":1,"op":"rename","at":"t","childId":"c","child":"/c","name":"\x00"}', id="nul"
        ),
        pytest.param(compact(SPAWN).replace(b'"depth":1', b'"depth":01'), id="leading-zero"),
        pytest.param(compact(SPAWN) + b"x", id="trailing-data"),
        pytest.param(compact(SPAWN) + compact(SPAWN), id="two-records"),
    ],
)
def test_near_canonical_lines_that_are_not_json_are_malformed(line: bytes) -> None:
    assert (parse(line).events, parse(line).malformed_lines) == ((), 1)


# ------------------------------------------------------------------ another root's spawns

OURS = "/s/sessions/p.jsonl"
THEIRS = "/s/sessions/other.jsonl"


def _mixed_ledger() -> bytes:
    """Spawns of two roots, their renames and deletes, and bad lines of every kind."""
    lines = [json.dumps(META).encode()]
    for i in range(6):
        parent = OURS if i % 2 else THEIRS
        child = f"/s/session-artifacts/{i}/sub-{i}/{i}.jsonl"
        spawn = SPAWN | {"childId": f"sub-{i}", "parent": parent, "child": child}
        lines += [json.dumps(spawn).encode(), json.dumps(RENAME | {"child": child}).encode()]
    lines += [
        json.dumps(SPAWN | {"parent": THEIRS, "depth": 0}).encode(),  # malformed, their root
        json.dumps(SPAWN | {"parent": THEIRS, "name": None}).encode(),
        json.dumps({"v": 1, "op": "fork", "at": "t"}).encode(),  # unknown op
        b"not json",
        json.dumps(SPAWN | {"parent": THEIRS}).encode()[:-1],  # torn tail
    ]
    return b"\n".join(lines)


def test_kept_roots_parse_as_the_whole_ledger_cut_to_them() -> None:
    data = _mixed_ledger()
    whole = parse_ledger(io.BytesIO(data))
    kept = parse_ledger(io.BytesIO(data), keep={OURS.lstrip("/")})
    expected = tuple(
        e for e in whole.events if type(e) is not SpawnEvent or e.parent == OURS.lstrip("/")
    )
    assert kept == LedgerParse(expected, whole.malformed_lines, whole.unknown_ops, True)
    assert (whole.malformed_lines, whole.unknown_ops) == (3, 1)
    assert sum(type(e) is SpawnEvent for e in kept.events) == 3


def test_another_roots_spawns_are_dropped_before_their_event_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A capped ledger is mostly other roots' spawns: building an event for each (its child
    path normalised, its session id cut out) only to drop it was a third of a re-score."""
    built: list[str] = []
    real = ledger._spawn_event

    def counting(paths: Any, child_id: str, *rest: Any) -> SpawnEvent:
        built.append(child_id)
        return real(paths, child_id, *rest)

    monkeypatch.setattr(ledger, "_spawn_event", counting)
    parse_ledger(io.BytesIO(_mixed_ledger()), keep={OURS.lstrip("/")})
    assert built == ["sub-1", "sub-3", "sub-5"]


# --------------------------------------------------------------------------- compact lines


def _decoder_only(data: bytes, keep: Collection[str] | None = None) -> LedgerParse:
    """The parse with every line through the JSON decoder (no compact-form reading)."""
    with mock.patch.object(ledger, "_compact", return_value=None):
        return parse_ledger(io.BytesIO(data), keep)


def test_compact_lines_are_read_without_the_decoder() -> None:
    """Decoding 100,000 compact lines was half of a 1,800-shard re-score: the product's own
    form is read by one pattern, to the same events (another root's spawns dropped)."""
    records = [
        SPAWN,
        SPAWN | {"parent": THEIRS},
        SPAWN | {"depth": 12, "name": ""},
        RENAME,
        DELETE,
        DELETE | {"reason": "revoked"},
    ]
    data = b"".join(compact(r) + b"\n" for r in records)
    keep = {"s/sessions/p.jsonl"}
    expected = _decoder_only(data, keep)
    with mock.patch.object(ledger, "decode_json", side_effect=AssertionError("decoded")):
        assert parse_ledger(io.BytesIO(data), keep) == expected
    assert len(expected.events) == 5 and expected.malformed_lines == 0


#: Field values that keep a line compact, and odd ones that do not (or make it invalid).
_plain = st.text(alphabet=" az/.:-_09~", max_size=5)
_odd = st.one_of(
    st.sampled_from(["", '"', "\\", "\x00", "\x1f", "\x7f", "é", "\u2028", "a\nb", "{}"]),
    st.sampled_from([-1, 0, 1, 2, 10**17, 10**18, 10**19, True, None, 1.0, [], {}]),
)


@st.composite
def _records(draw: st.DrawFn) -> dict[str, object]:
    """A record in the contract's key order; sometimes one field odd, missing or extra."""
    op = draw(st.sampled_from(["spawn", "rename", "delete", "meta", "other"]))
    record: dict[str, object] = {"v": 1, "op": op, "at": draw(_plain)}
    if op in ("spawn", "rename", "delete"):
        record["childId"] = draw(_plain)
    if op == "spawn":
        parent = draw(st.sampled_from([OURS, THEIRS, "/s/sessions//p.jsonl"]))
        record |= {"parent": parent, "child": draw(_plain), "depth": draw(st.integers(1, 3))}
        record["name"] = draw(_plain)
    elif op == "rename":
        record |= {"child": draw(_plain), "name": draw(_plain)}
    elif op == "delete":
        record["child"] = draw(_plain)
        if draw(st.booleans()):
            record["reason"] = draw(_plain)
    elif op == "meta":
        record["sessionsDir"] = draw(_plain)
    change = draw(st.sampled_from(["none", "odd", "missing", "extra"]))
    key = draw(st.sampled_from(sorted(record)))
    if change == "odd":
        record[key] = draw(_odd)
    elif change == "missing":
        del record[key]
    elif change == "extra":
        record["extra"] = draw(_odd)
    return record


#: Bytes spliced into a line: JSON's punctuation and escapes break the compact form most.
_splices = st.one_of(
    st.sampled_from([b'"', b"\\", b'\\"', b"\\u0041", b",", b"}", b"{", b" ", b"\x00", b"\xc3"]),
    st.binary(max_size=3),
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(
        st.tuples(_records(), st.booleans(), st.integers(0, 200), _splices), max_size=10
    ),
    keep=st.sampled_from([None, {"s/sessions/p.jsonl"}]),
    terminated=st.booleans(),
)
def test_reading_compact_lines_never_changes_a_parse(
    lines: list[tuple[dict[str, object], bool, int, bytes]],
    keep: set[str] | None,
    terminated: bool,
) -> None:
    data = b"\n".join(
        (line[:at] + splice + line[at:]) if mutate else line
        for line, mutate, at, splice in ((compact(r), m, a, s) for r, m, a, s in lines)
    ) + (b"\n" if terminated and lines else b"")
    assert parse_ledger(io.BytesIO(data), keep) == _decoder_only(data, keep)

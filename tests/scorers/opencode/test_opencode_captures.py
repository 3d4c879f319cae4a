"""Score the captured real opencode runs (tests/data/opencode-runs), inputs built by hand.

Each run gets the verdict its script calls for, its tokens equal what the scripted server
billed (in total and split into the root session and the sessions below it), and damaged
input (a missing, cut or garbled database, a row with broken JSON) is counted, never fatal.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from oc_runs import (
    ALL_RUNS,
    MANIFEST,
    RUNS,
    billed_total,
    billing,
    db_bytes,
    inputs,
    mutated,
    query,
)

from scorers.opencode import opencode_evidence, parse_stdout, score_opencode
from scorers.verdict import ItemScore

#: The criteria each run fails (the README of the runs says what each one did).
VERDICTS = {
    "honest": set(),
    "sequential": set(),
    "cost": set(),
    "no-title": set(),
    "no-spawn": {"delegation", "provenance"},
    "helper-names": {"delegation", "provenance"},
    "wrong-answer": {"coverage"},  # the child said 25 itself: traced, but wrong
    "double-spawn": {"dedup"},
    # The child answered "Finished." and the parent left events-01 out of the artifact: a
    # missing bullet (coverage) leaves nothing to trace (provenance). It did reply, so
    # receipts pass.
    "silent-child": {"coverage", "provenance"},
    "empty-child": {"coverage", "provenance"},
    # A failed child is a failure notice (receipts pass); its shard has no bullet.
    "child-400": {"coverage", "provenance"},
    "child-500": {"coverage", "provenance"},
    # The children never answered (each call returned "running" at once): no receipts.
    "background": {"coverage", "receipts", "provenance"},
    "limit-small": {"coverage", "provenance"},
    # The model was never reached: the harness makes these errors, not agent failures.
    "root-401": {"coverage", "delegation", "provenance"},
    "root-500": {"coverage", "delegation", "provenance"},
    "dead-server": {"coverage", "delegation", "provenance"},
}
ROOT_FAILURES = {
    "root-401": "APIError 401: scripted failure 401",
    "root-500": "APIError 500: scripted failure 500",
    "dead-server": "APIError: Cannot connect to API: Unable to connect. Is the computer able "
    "to access the url?",
}


def score(run: str, **replace: object) -> ItemScore:
    return score_opencode(inputs(run, **replace), MANIFEST)  # type: ignore[arg-type]


def root_id(run: str) -> str:
    ((sid,),) = query(run, "SELECT id FROM session WHERE parent_id IS NULL")
    return str(sid)


def test_every_capture_has_a_verdict() -> None:
    assert set(ALL_RUNS) == set(VERDICTS)


@pytest.mark.parametrize("run", sorted(VERDICTS))
def test_capture_verdict(run: str) -> None:
    result = score(run)
    assert set(result.failed_criteria) == VERDICTS[run], result.failures
    assert result.resolved is (not VERDICTS[run])
    assert result.model_reached is (run not in ROOT_FAILURES)
    assert result.parent_session_id == root_id(run)
    assert result.stdout_malformed_lines == 0
    assert (result.transcript_malformed_lines, result.child_session_malformed_lines) == (0, 0)


@pytest.mark.parametrize("run", sorted(ROOT_FAILURES))
def test_a_failed_root_never_reached_the_model(run: str) -> None:
    """One assistant message, failed: the harness reports "model never reached"."""
    result = score(run)
    assert (result.assistant_messages, result.failed_assistant_messages) == (1, 1)
    assert result.agent_error == ROOT_FAILURES[run]
    assert result.tokens_used == 0 and result.total_spawns == 0


@pytest.mark.parametrize("run", sorted(r for r in VERDICTS if billing(r) and r != "no-title"))
def test_tokens_equal_what_the_server_billed(run: str) -> None:
    """The database's per-message tokens are the bill: in total, for the root session and
    for the sessions below it (billing's ``session`` is the call's ``x-session-id``)."""
    rows = billing(run)
    root = root_id(run)
    usage = score(run).usage
    assert usage is not None and usage.parent is not None and usage.children is not None
    assert usage.total.total == billed_total(rows)
    assert usage.parent.total == billed_total([r for r in rows if r["session"] == root])
    assert usage.children.total == billed_total([r for r in rows if r["session"] != root])
    fields = {
        "input_tokens": usage.total.input_tokens,
        "output_tokens": usage.total.output_tokens,
        "cache_read_input_tokens": usage.total.cache_read_tokens,
        "cache_creation_input_tokens": usage.total.cache_write_tokens,
    }
    assert fields == {k: sum(r["usage"][k] for r in rows) for k in fields}
    assert usage.total.reasoning_tokens == 0  # Anthropic reports none; opencode stores 0
    if run == "background":
        # Three children aborted with no tokens: in this run none had been billed, in an
        # earlier one one had. The files cannot tell, so the count is a lower bound.
        assert not usage.complete
        assert usage.gaps == (
            "3 model requests ended mid-answer or aborted with no usage recorded "
            "(the provider may have billed them)",
        )
    else:
        assert usage.complete and usage.gaps == ()
    assert usage.source == "parent transcript + children's usage in the transcripts"


def test_the_title_call_is_billed_but_stored_nowhere() -> None:
    """Without ``--title`` opencode makes one more call (its answer becomes the title);
    its tokens are in no message, so the database is short of the bill by exactly it."""
    rows = billing("no-title")
    (title_call,) = [r for r in rows if r["role"] == "internal"]
    assert title_call["answer"]["text"] == "OK."
    missing = billed_total(rows) - score("no-title").tokens_used
    assert missing == billed_total([title_call]) == 1195


def test_compaction_calls_count_as_the_sessions_usage() -> None:
    """limit-small: each session's compaction calls (billed as internal) are assistant
    messages of that session, so the root's usage is its own calls plus its compactions."""
    rows = billing("limit-small")
    root = root_id("limit-small")
    usage = score("limit-small").usage
    assert usage is not None and usage.parent is not None
    own = [r for r in rows if r["session"] == root and r["role"] == "parent"]
    assert usage.parent.total == billed_total([r for r in rows if r["session"] == root])
    assert usage.parent.total > billed_total(own)


def test_the_agents_own_price_is_the_sum_of_its_message_costs() -> None:
    ((expected,),) = query("cost", "SELECT sum(cost) FROM session")
    usage = score("cost").usage
    assert usage is not None and usage.agent_reported_cost_usd == pytest.approx(expected)
    assert expected > 0
    honest = score("honest").usage
    assert honest is not None and honest.agent_reported_cost_usd is None  # priced at 0


def test_honest_evidence() -> None:
    evidence = opencode_evidence(inputs("honest"))
    root = root_id("honest")
    spawns = evidence.depth1_spawns()
    assert [s.name for s in spawns] == [shard.worker for shard in MANIFEST.shards]
    assert all(s.parent == root and s.child == f"{root}/{s.child_id}" for s in spawns)
    assert evidence.child_session_dirs == 3
    children = {c.child_id: c for c in evidence.child_sessions}
    assert set(children) == {s.child_id for s in spawns}
    for spawn in spawns:
        child = children[spawn.child_id]
        assert (child.depth, child.parent_session, child.worked) == (1, root, True)
        assert child.tasks == frozenset({(root, spawn.child_id)})
        assert child.started_at is not None and child.started_at >= spawn.at
    session = evidence.session
    assert session is not None and session.header_id == root
    assert [r.text.splitlines()[-1] for r in session.replies] == [
        "ANSWER::events-01.jsonl::24",
        "ANSWER::events-02.jsonl::628511",
        "ANSWER::events-03.jsonl::13",
    ]
    result = score("honest")
    assert (result.assistant_messages, result.total_spawns, result.duplicate_spawns) == (3, 3, 0)
    assert result.efficiency is not None
    assert result.efficiency.peak_parallel_children == 3  # one message, three calls at once


def test_sequential_children_run_one_at_a_time() -> None:
    result = score("sequential")
    assert result.efficiency is not None and result.efficiency.peak_parallel_children == 1
    assert result.assistant_messages == 5  # three spawning turns, the write, the answer


def test_double_spawn_names_the_duplicate() -> None:
    result = score("double-spawn")
    (dup,) = result.duplicate_spawn_details
    first, *_rest, fourth = opencode_evidence(inputs("double-spawn")).depth1_spawns()
    assert (dup.name, dup.child_id, dup.held_by) == (
        "worker-events-01",
        fourth.child_id,
        first.child_id,
    )
    assert result.total_spawns == 4 and result.missing_receipts == ()


def test_silent_and_empty_children_reply_what_they_said() -> None:
    """The parent got "Finished." / an empty result; that is the whole reply."""
    for run, text in (("silent-child", "Finished."), ("empty-child", "")):
        session = opencode_evidence(inputs(run)).session
        assert session is not None
        assert session.replies[0].text == text


def test_a_failed_child_is_a_failure_notice() -> None:
    session = opencode_evidence(inputs("child-400")).session
    assert session is not None and len(session.replies) == 2
    (notice,) = session.notices
    assert notice.kind == "failure"
    assert notice.text == f"Subagent failed (task_id: {notice.child_id}): scripted failure 400"
    child = next(
        c
        for c in opencode_evidence(inputs("child-400")).child_sessions
        if c.child_id == notice.child_id
    )
    assert not child.worked  # its only model call failed


def test_a_background_answer_is_no_reply() -> None:
    evidence = opencode_evidence(inputs("background"))
    assert evidence.session is not None
    assert evidence.session.replies == () and evidence.session.notices == ()
    assert not any(c.worked for c in evidence.child_sessions)  # aborted, zero tokens


def test_a_forged_answer_for_a_silent_child_is_untraced() -> None:
    """The parent writing a right answer its child never gave fails provenance."""
    forged = (RUNS / "honest" / "combined-index.md").read_bytes()
    for run in ("silent-child", "empty-child", "child-400"):
        result = score(run, artifact=forged)
        assert result.failed_criteria == ("provenance",), run
        assert result.untraced_shards == ("events-01.jsonl",)


def test_an_earlier_message_text_is_never_the_reply(tmp_path: Path) -> None:
    """empty-child with the answer planted in the child's *earlier* message: the parent
    received an empty result, so nothing vouches for a forged 24."""
    child = "(SELECT id FROM session WHERE title LIKE 'worker-events-01%')"
    db = mutated(
        tmp_path,
        "empty-child",
        (
            "UPDATE part SET data = json_set(data, '$.text', ?) WHERE session_id = "
            + child
            + " AND json_extract(data, '$.text') = ?",
            ("ANSWER::events-01.jsonl::24", "Reading shards/events-01.jsonl."),
        ),
    )
    forged = (RUNS / "honest" / "combined-index.md").read_bytes()
    result = score("empty-child", db=db, artifact=forged)
    assert result.failed_criteria == ("provenance",)
    (detail,) = result.untraced_shard_details
    assert "states '24'" in detail.reason


def test_a_reply_the_parent_did_not_receive_vouches_for_nothing(tmp_path: Path) -> None:
    """The child said 24 but the task result the parent got says something else."""
    db = mutated(
        tmp_path,
        "honest",
        (
            "UPDATE part SET data = json_set(data, '$.state.output', replace("
            "json_extract(data, '$.state.output'), '::24', '::99')) "
            "WHERE json_extract(data, '$.state.input.description') = 'worker-events-01'",
            (),
        ),
    )
    result = score("honest", db=db)
    assert result.failed_criteria == ("provenance",) and result.missing_receipts == ()
    assert result.untraced_shards == ("events-01.jsonl",)


def test_a_call_resuming_its_child_is_no_duplicate(tmp_path: Path) -> None:
    """Point double-spawn's fourth call at the first child (a resumed session): the same
    edge spawned again, within the budget."""
    first = "(SELECT id FROM session WHERE title LIKE 'worker-events-01%' ORDER BY time_created)"
    db = mutated(
        tmp_path,
        "double-spawn",
        (
            "UPDATE part SET data = json_set(data, '$.state.metadata.sessionId', " + first + ")"
            " WHERE id = (SELECT id FROM part WHERE json_extract(data, '$.tool') = 'task'"
            " ORDER BY time_created DESC LIMIT 1)",
            (),
        ),
    )
    result = score("double-spawn", db=db)
    assert result.duplicate_spawns == 0 and result.total_spawns == 4
    assert result.passed("dedup")


def test_more_spawns_than_twice_the_shards_is_over_budget(tmp_path: Path) -> None:
    """honest plus four calls under other names (children that never ran): no duplicate,
    but seven spawns for three shards."""
    db = mutated(
        tmp_path,
        "honest",
        (
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)"
            " SELECT id || '-extra-' || n, message_id, session_id, time_created + n,"
            " time_updated, json_set(data, '$.state.input.description', 'helper-' || n,"
            " '$.callID', 'extra-' || n, '$.state.metadata.sessionId', 'ses_none_' || n)"
            " FROM part, (SELECT 1 AS n UNION SELECT 2 UNION SELECT 3 UNION SELECT 4)"
            " WHERE json_extract(data, '$.state.input.description') = 'worker-events-01'",
            (),
        ),
    )
    result = score("honest", db=db)
    assert result.failed_criteria == ("dedup",)
    assert (result.total_spawns, result.spawn_budget, result.duplicate_spawns) == (7, 6, 0)
    assert "7 depth-1 spawns exceed the budget of 6" in result.failures[0]


# --- damaged input: counted, never fatal ---------------------------------------------------


def test_without_the_database_the_run_falls_back_to_stdout() -> None:
    """No database: no spawns or children to judge; the parent's usage is stdout's."""
    result = score("honest", db=None)
    assert set(result.failed_criteria) == {"delegation", "provenance"}
    assert result.parent_session_id is None and result.model_reached
    parent = [r for r in billing("honest") if r["session"] == root_id("honest")]
    assert result.tokens_used == billed_total(parent)
    failed = score("root-401", db=None)
    assert not failed.model_reached and failed.agent_error == ROOT_FAILURES["root-401"]


@pytest.mark.parametrize("keep", [0, 100, 4096, 0.25, 0.5, 0.75])
def test_a_cut_database_is_counted_not_fatal(keep: float) -> None:
    data = db_bytes("honest")
    cut = data[: int(keep * len(data))] if isinstance(keep, float) else data[:keep]
    result = score("honest", db=cut)
    assert not result.resolved
    assert result.transcript_malformed_lines >= 1


def test_no_cut_of_a_database_raises() -> None:
    """Whatever is left is read; a cut inside space the database did not use loses
    nothing (SQLite reads the missing tail as zeros)."""
    data = db_bytes("double-spawn")
    for end in range(0, len(data), 3001):
        evidence = opencode_evidence(inputs("double-spawn", db=data[:end]))
        assert evidence.session is None or evidence.session.malformed_lines >= 1
    assert score("double-spawn", db=data[:-1]).failed_criteria == ("dedup",)


def test_garbage_is_counted_not_fatal() -> None:
    result = score("honest", db=b"not a database at all\n" * 100)
    assert result.transcript_malformed_lines >= 1
    assert result.parent_session_id == root_id("honest")  # named by stdout
    assert result.model_reached  # stdout's messages stand in


@pytest.mark.parametrize(
    ("where", "root_rows", "child_rows", "failing"),
    [
        # The root's opening text: one bad row, nothing else lost.
        ("json_extract(data, '$.text') = 'I delegate one shard per subagent.'", 1, 0, set()),
        # A child's read call: counted with the child.
        (
            "json_extract(data, '$.tool') = 'read' AND json_extract(data, "
            "'$.state.input.filePath') LIKE '%events-02%'",
            0,
            1,
            set(),
        ),
        # The spawn itself: that worker is gone from the evidence.
        (
            "json_extract(data, '$.state.input.description') = 'worker-events-03'",
            1,
            0,
            {"delegation", "provenance"},
        ),
    ],
)
def test_a_part_with_broken_json_is_counted(
    tmp_path: Path, where: str, root_rows: int, child_rows: int, failing: set[str]
) -> None:
    db = mutated(
        tmp_path, "honest", (f"UPDATE part SET data = '{{\"type\": broken' WHERE {where}", ())
    )
    result = score("honest", db=db)
    assert (result.transcript_malformed_lines, result.child_session_malformed_lines) == (
        root_rows,
        child_rows,
    )
    assert set(result.failed_criteria) == failing


def test_unreadable_tokens_and_messages_are_counted(tmp_path: Path) -> None:
    """A child's message with tokens that are no count, and its prompt stored as bytes."""
    child = "(SELECT id FROM session WHERE title LIKE 'worker-events-02%')"
    db = mutated(
        tmp_path,
        "honest",
        (
            "UPDATE message SET data = json_set(data, '$.tokens', 'many') WHERE session_id = "
            + child
            + " AND json_extract(data, '$.finish') = 'tool-calls'",
            (),
        ),
        (
            "UPDATE message SET data = x'00ff' WHERE session_id = "
            + child
            + " AND json_extract(data, '$.role') = 'user'",
            (),
        ),
    )
    result = score("honest", db=db)
    assert result.child_session_malformed_lines == 2
    assert result.tokens_used < billed_total(billing("honest"))  # one message's tokens lost
    # Its prompt went with the unreadable message: the child shows no task from the parent.
    assert result.failed_criteria == ("provenance",)
    assert "holds no task from the parent" in result.untraced_shard_details[0].reason


def test_stdout_lines_that_are_not_events_are_counted() -> None:
    raw = RUNS / "honest" / "stdout.jsonl"
    data = b"not json\n" + raw.read_bytes() + b'{"no": "type"}\n'
    parsed = parse_stdout(io.BytesIO(data))
    assert parsed.stream.malformed_lines == 2
    assert parsed.session_id == root_id("honest")
    assert parsed.stream.usage.assistant_messages == 3 and not parsed.stream.cut_short
    events = [json.loads(line) for line in raw.read_text().splitlines()]
    assert parsed.stream.events == len(events)


def test_stdout_ending_inside_a_call_is_cut_short() -> None:
    """The first five events of honest: a step started, its finish never printed."""
    lines = (RUNS / "honest" / "stdout.jsonl").read_bytes().splitlines(keepends=True)
    parsed = parse_stdout(io.BytesIO(b"".join(lines[:5])))
    assert parsed.stream.cut_short and parsed.stream.usage.assistant_messages == 0
    failed = parse_stdout(io.BytesIO((RUNS / "root-401" / "stdout.jsonl").read_bytes()))
    assert not failed.stream.cut_short
    assert (
        failed.stream.usage.assistant_messages,
        failed.stream.usage.failed_assistant_messages,
    ) == (1, 1)

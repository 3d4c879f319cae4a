"""Forged and damaged Gemini CLI records: copies of the real captures with lines cut,
files removed, ids pointing nowhere, history replaced, a model switched, an answer the
child never gave; and the chat record's own rules on made-up lines."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from gm_runs import chat_files, child_file, copy_run, edit_lines, inputs_of, manifest, parent_file

from scorers import assess_evidence
from scorers.gemini import gemini_evidence, heard, parse_chat, parse_stdout, read_run, score_gemini
from scorers.gemini.chat import ToolCall
from scorers.gemini.invoke import worker_of

META = {"sessionId": "s", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"}


def chat_of(*lines: object) -> bytes:
    return b"".join((x if isinstance(x, bytes) else json.dumps(x).encode()) + b"\n" for x in lines)


def message(mid: str, kind: str = "gemini", **more: object) -> dict[str, object]:
    return {"id": mid, "type": kind, "timestamp": "2026-01-01T00:00:01Z", "content": "", **more}


def failing(run: Path, shards: int = 2) -> set[str]:
    score = score_gemini(inputs_of(run), manifest(shards))
    return {c.name for c in score.checks if not c.passed}


def test_a_message_appended_again_keeps_its_place_and_its_last_version() -> None:
    chat = parse_chat(
        io.BytesIO(
            chat_of(
                META,
                message("a", text="x"),
                message("b", "user"),
                message(
                    "a",
                    toolCalls=[{"id": "c1", "name": "read_file", "args": {}, "status": "success"}],
                ),
            )
        )
    )
    assert [m.id for m in chat.messages] == ["a", "b"]
    assert [c.call_id for c in chat.messages[0].calls] == ["c1"]


def test_a_set_of_messages_replaces_the_list() -> None:
    chat = parse_chat(
        io.BytesIO(
            chat_of(
                META,
                message("a"),
                message("b"),
                {"$set": {"messages": [message("c")]}},
                {"$set": {"summary": "done", "lastUpdated": "2026-01-01T00:00:09Z"}},
            )
        )
    )
    assert [m.id for m in chat.messages] == ["c"]
    assert chat.summary == "done" and chat.ended_at == "2026-01-01T00:00:09Z"


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(b'{"id": "x", "type": "gem', id="truncated-line"),
        pytest.param(b"\xff\xfe not json", id="not-utf8"),
        pytest.param(b'["a list"]', id="not-an-object"),
        pytest.param(b'{"neither": "message nor patch"}', id="unknown-record"),
    ],
)
def test_malformed_lines_are_counted_never_fatal(damage: bytes) -> None:
    chat = parse_chat(io.BytesIO(chat_of(META, message("a"), damage, message("b"))))
    assert chat.malformed == 1
    assert [m.id for m in chat.messages] == ["a", "b"]


def test_a_record_with_no_metadata_is_damaged() -> None:
    chat = parse_chat(io.BytesIO(chat_of(message("a"))))
    assert chat.meta == {} and chat.malformed == 1


def test_a_torn_parent_record_is_counted_and_scored(tmp_path: Path) -> None:
    run = copy_run("honest", tmp_path)
    parent = parent_file(run)
    parent.write_bytes(parent.read_bytes()[:-40])
    evidence = gemini_evidence(inputs_of(run))
    assert evidence.session is not None and evidence.session.malformed_lines == 1


def test_a_parent_record_with_no_readable_metadata_leaves_no_parent(tmp_path: Path) -> None:
    run = copy_run("honest", tmp_path)
    parent = parent_file(run)
    parent.write_bytes(b"garbage\n" + parent.read_bytes().split(b"\n", 1)[1])
    evidence = gemini_evidence(inputs_of(run))
    assert evidence.ledger.events == ()
    assert evidence.session is not None and evidence.session.malformed_lines > 0  # damaged


def test_a_missing_child_record_fails_provenance_and_leaves_a_usage_gap(tmp_path: Path) -> None:
    run = copy_run("honest", tmp_path)
    child_file(run, "w2").unlink()
    score = score_gemini(inputs_of(run), manifest(2))
    assert {c.name for c in score.checks if not c.passed} == {"delegation", "provenance"}
    assert not score.usage.complete
    assert any("without a transcript" in gap for gap in score.usage.gaps)


def test_an_agent_id_pointing_nowhere_is_a_spawn_with_no_session(tmp_path: Path) -> None:
    run = copy_run("honest", tmp_path)

    def retarget(line: dict[str, object]) -> dict[str, object]:
        calls = line.get("toolCalls")
        for c in calls if isinstance(calls, list) else []:
            if "Worker: w1" in c["args"].get("prompt", ""):
                c["agentId"] = "nowhere"
        return line

    edit_lines(parent_file(run), retarget)
    evidence = gemini_evidence(inputs_of(run))
    assert "nowhere" in {s.child_id for s in evidence.depth1_spawns()}
    assert "nowhere" not in {c.child_id for c in evidence.child_sessions}
    assert "provenance" in failing(run)


def test_a_child_record_the_parent_never_named_is_no_spawn(tmp_path: Path) -> None:
    run = copy_run("honest", tmp_path)
    stray = child_file(run, "w1")
    stray.rename(stray.with_name("stray.jsonl"))
    evidence = gemini_evidence(inputs_of(run))
    assert "stray" in {c.child_id for c in evidence.child_sessions}
    assert "stray" not in {s.child_id for s in evidence.depth1_spawns()}


def test_a_child_whose_history_was_replaced_did_no_work(tmp_path: Path) -> None:
    run = copy_run("honest", tmp_path)
    path = child_file(run, "w1")
    with path.open("a") as out:
        out.write(json.dumps({"$set": {"messages": []}}) + "\n")
    evidence = gemini_evidence(inputs_of(run))
    w1 = next(s.child_id for s in evidence.depth1_spawns() if s.name == "w1")
    child = next(c for c in evidence.child_sessions if c.child_id == w1)
    assert not child.worked and child.tasks == frozenset() and child.usage.total == 0
    assert "provenance" in failing(run)


def test_a_result_the_child_never_gave_is_a_reply_that_vouches_for_nothing(tmp_path: Path) -> None:
    run = copy_run("honest", tmp_path)
    path = parent_file(run)
    path.write_text(path.read_text().replace("ANSWER::s1.txt::42", "ANSWER::s1.txt::43"))
    (run / "repo" / "ANSWERS.md").write_text("- s1.txt: 42\n- s2.txt: 42\n")
    evidence = gemini_evidence(inputs_of(run))
    assert evidence.session is not None
    assert "" in {r.text for r in evidence.session.replies}
    assert failing(run) == {"provenance"}


def test_a_model_switch_mid_run_shows_a_second_model(tmp_path: Path) -> None:
    run = copy_run("honest", tmp_path)
    switched = iter(range(10**6))

    def switch(line: dict[str, object]) -> dict[str, object]:
        if line.get("type") == "gemini" and next(switched) >= 2:
            line["model"] = "gemini-2.5-flash-lite"
        return line

    edit_lines(child_file(run, "w2"), switch)
    parsed = read_run(inputs_of(run, "scripted-honest"))
    assert [m for m, _u in parsed.by_model()] == ["gemini-2.5-flash-lite", "scripted-honest"]
    assert parsed.other_models() == ("gemini-2.5-flash-lite",)
    total = sum((u.total for _m, u in parsed.by_model()), 0)
    evidence = gemini_evidence(inputs_of(run))
    assert evidence.session is not None
    assert total == (evidence.session.usage.usage + evidence.session.child_usage).total
    # Asked for scripted-honest, partly answered by another model: the run is the
    # provider's (an error, kept out of every rate), resolved or not, and its usage is
    # split per model so each is priced at its own price.
    asked = gemini_evidence(inputs_of(run, "scripted-honest"))
    assessed = assess_evidence(asked, manifest(2))
    assert assessed.score.resolved and asked.off_model == ("gemini-2.5-flash-lite",)
    gave_up = assessed.faults.gave_up or ""
    assert gave_up.startswith("provider: the client switched models mid-run")
    assert "gemini-2.5-flash-lite" in gave_up
    assert dict(assessed.score.usage.by_model) == dict(parsed.by_model())
    # The same records with the switch undone: nothing to say.
    edit_lines(child_file(run, "w2"), lambda line: {**line, "model": "scripted-honest"}
               if line.get("type") == "gemini" else line)  # fmt: skip
    assert assess_evidence(gemini_evidence(inputs_of(run, "scripted-honest")), manifest(2)
                           ).faults.gave_up is None  # fmt: skip


def call(output: str | None = None, error: str | None = None, prompt: str = "") -> ToolCall:
    args = {"agent_name": "shard-worker", "prompt": prompt}
    return ToolCall("c", "invoke_agent", args, "success", "a", output, error, None)


@pytest.mark.parametrize(
    "reason", ["ERROR_NO_COMPLETE_TASK_CALL", "MAX_TURNS", "TIMEOUT", "ABORTED"]
)
def test_any_termination_but_goal_is_a_failure(reason: str) -> None:
    told = heard(
        call(f"Subagent 'x' finished.\nTermination Reason: {reason}\nResult:\nANSWER::a::1")
    )
    assert (told.outcome, told.reason, told.result) == ("stopped", reason, None)


@pytest.mark.parametrize(
    ("output", "error", "outcome"),
    [
        pytest.param(
            "Subagent 'x' finished.\nTermination Reason: GOAL\nResult:\nA\nB",
            None,
            "finished",
            id="goal",
        ),
        pytest.param("Subagent 'x' failed. Error: boom", None, "failed", id="failed"),
        pytest.param(None, "Subagent 'x' not found.", "not_found", id="not-found"),
        pytest.param("something else", None, "unknown", id="unknown-answer"),
        pytest.param(None, None, "pending", id="no-answer"),
    ],
)
def test_what_the_parent_heard(output: str | None, error: str | None, outcome: str) -> None:
    told = heard(call(output, error))
    assert told.outcome == outcome
    if outcome == "finished":
        assert told.result == "A\nB"


@pytest.mark.parametrize(
    ("prompt", "worker"),
    [
        pytest.param("Worker: w1\nRead ...", "w1", id="plain"),
        pytest.param("**Worker:** W2\nRead ...", "w2", id="emphasis-and-case"),
        pytest.param("Read the file shards/s1.txt", "shard-worker", id="no-worker-line"),
        pytest.param("Worker: helper-7\n", "helper-7", id="helper-name"),
    ],
)
def test_the_worker_travels_in_the_prompt(prompt: str, worker: str) -> None:
    assert worker_of(call(prompt=prompt), ("w1", "w2")) == worker


def test_a_failed_edit_is_no_write(tmp_path: Path) -> None:
    run = copy_run("edit-failures", tmp_path)

    def refuse(line: dict[str, object]) -> dict[str, object]:
        calls = line.get("toolCalls")
        for c in calls if isinstance(calls, list) else []:
            if c["name"] == "replace":
                c["status"] = "error"
        return line

    for rel, path in chat_files(run).items():
        if "/" in rel:
            edit_lines(path, refuse)
    evidence = gemini_evidence(inputs_of(run))
    assert [w for w in evidence.writes if w.how == "edit"] == []


def test_a_stream_that_stops_before_its_result_was_cut_short() -> None:
    data = b'{"type":"init","session_id":"s","model":"m"}\nnot json\n{"type":"message"}\n'
    parsed = parse_stdout(io.BytesIO(data))
    assert parsed.stream.cut_short and parsed.stream.malformed_lines == 1
    assert parsed.stream.events == 2 and parsed.session_id == "s"

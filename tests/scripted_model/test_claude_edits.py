"""The Claude Code scripts on an edit fixture: who edits, with which tools, and what a
refused edit makes them do next (conversations built by hand, no client)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scripted_model.claude_edits import MAX_EDIT_TRIES, NOT_FOUND
from scripted_model.claude_scripts import CLAUDE_SCRIPTS, Reply, next_claude_action
from scripted_model.messages_conversation import MessagesConversation
from scripted_model.oracle import Edit, Oracle

DATA = Path(__file__).resolve().parent.parent / "data" / "fixtures"
EDIT_TINY, TINY = DATA / "edit-tiny", DATA / "tiny"
ORACLE = Oracle.from_fixture_dirs([EDIT_TINY, TINY])
CWD = "/w/repo"
PARENT_TASK = (EDIT_TINY / "task.txt").read_text()
ALPHA = [
    Edit("pkg/alpha.py", "RATE = 0", "RATE = 37"),
    Edit("CHANGELOG.md", "<!-- alpha -->", "- alpha: rate 37"),
]


class Talk:
    """One conversation as the client would send it, grown turn by turn."""

    def __init__(self, model: str, prompt: str) -> None:
        self.model = model
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        self.uses = 0

    def next(self) -> Reply:
        body = {
            "model": self.model,
            "tools": [{"name": "Read"}],
            "messages": self.messages,
            "system": f"Primary working directory: {CWD}",
        }
        action = next_claude_action(
            CLAUDE_SCRIPTS[self.model], MessagesConversation.from_request(body), ORACLE
        )
        assert isinstance(action, Reply)
        return action

    def answer(self, reply: Reply, results: dict[str, tuple[bool, str]] | None = None) -> None:
        """Append ``reply`` and a result per call: ``results`` by tool name, else success."""
        blocks, outcome = [], []
        for call in reply.calls:
            self.uses += 1
            tid = f"t{self.uses}"
            blocks.append(
                {"type": "tool_use", "id": tid, "name": call.name, "input": dict(call.input)}
            )
            error, text = (results or {}).get(call.name, (False, "ok"))
            outcome.append(
                {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": error}
            )
        self.messages.append(
            {"role": "assistant", "content": blocks or [{"type": "text", "text": reply.text}]}
        )
        if outcome:
            self.messages.append({"role": "user", "content": outcome})


def _child(model: str, shard: str = "alpha", index: int = 0, extra: str = "") -> Talk:
    return Talk(
        model, f"Carry out the ticket. SHARD=shards/{shard}.md INDEX={index} ATTEMPT=1{extra}"
    )


def _edits(reply: Reply) -> list[tuple[str, str, str]]:
    return [
        (c.input["file_path"], c.input["old_string"], c.input["new_string"])
        for c in reply.calls
        if c.name == "Edit"
    ]


def _as_calls(edits: list[Edit]) -> list[tuple[str, str, str]]:
    return [(f"{CWD}/{e.path}", e.old, e.new) for e in edits]


def test_the_oracle_knows_an_edit_shards_solution_and_files() -> None:
    assert list(ORACLE.solution("shards/alpha.md") or ()) == ALPHA
    assert ORACLE.owned_edits("alpha.md") == ALPHA[:1]
    assert ORACLE.solution("shard-a.txt") is None


def test_an_honest_child_reads_then_edits_its_files_then_answers() -> None:
    talk = _child("honest")
    first = talk.next()
    assert [c.name for c in first.calls] == ["Read"]  # its ticket
    talk.answer(first)
    change = talk.next()
    # Each file read in the same message as its edit (the client refuses an unread file).
    assert [c.name for c in change.calls] == ["Read", "Read", "Edit", "Edit"]
    assert [c.input["file_path"] for c in change.calls[:2]] == [
        f"{CWD}/pkg/alpha.py",
        f"{CWD}/CHANGELOG.md",
    ]
    assert _edits(change) == _as_calls(ALPHA)
    talk.answer(change)
    assert talk.next().text.endswith("ANSWER::alpha.md::37") and not talk.next().calls


def test_a_refused_edit_is_read_again_and_retried_until_the_tries_run_out() -> None:
    talk = _child("honest")
    talk.answer(talk.next())
    changed = (True, "File content has changed since it was last read. Call Read on this file")
    for _ in range(MAX_EDIT_TRIES):
        retry = talk.next()
        assert _edits(retry) == _as_calls(ALPHA)
        talk.answer(retry, {"Edit": changed})
    assert "ANSWER::alpha.md::37" in talk.next().text  # gives up: answers all the same


def test_an_edit_whose_old_text_is_gone_is_not_retried() -> None:
    """A duplicate child finds its shard's change made already."""
    talk = _child("double-spawn")
    talk.answer(talk.next())
    talk.answer(talk.next(), {"Edit": (True, f"<tool_use_error>{NOT_FOUND}.\nString: RATE = 0")})
    assert not talk.next().calls


def test_a_read_fixture_child_only_reads_and_answers() -> None:
    talk = Talk("honest", "Read it. SHARD=shards/shard-a.txt INDEX=0 ATTEMPT=1")
    talk.answer(talk.next())
    last = talk.next()
    assert not last.calls and last.text.endswith("ANSWER::shard-a.txt::3")


def _parent_until_write(model: str) -> list[tuple[str, str, str]]:
    """Play the parent (each spawn answered by a finished child's report) until it writes
    the index; the edits it made on the way."""
    talk, made = Talk(model, PARENT_TASK), []
    for _ in range(20):
        reply = talk.next()
        if any(c.name == "Write" for c in reply.calls):
            return made
        made += _edits(reply)
        spawns = [c for c in reply.calls if c.name == "Agent"]
        results = {}
        if spawns:  # answer each spawn as a finished foreground subagent
            results = {"Agent": (False, "done")}
        talk.answer(reply, results)
        for call, block in zip(reply.calls, talk.messages[-1]["content"], strict=True):
            if call.name == "Agent":
                shard = call.input["prompt"].split("SHARD=shards/")[1].split(".md")[0]
                block["content"] = f"ANSWER::{shard}.md::{ORACLE.answer(shard + '.md')}"
    raise AssertionError("the parent never wrote the index")


@pytest.mark.parametrize("model", ["no-spawn", "edit-parent"])
def test_the_parent_makes_every_change_itself(model: str) -> None:
    every = [e for s in ("alpha", "beta", "gamma") for e in ORACLE.solution(f"{s}.md") or ()]
    assert _parent_until_write(model) == _as_calls(every)


def test_an_honest_parent_edits_nothing() -> None:
    assert _parent_until_write("honest") == []


def test_edit_parent_children_only_answer() -> None:
    talk = _child("edit-parent")
    talk.answer(talk.next())
    last = talk.next()
    assert not last.calls and "ANSWER::alpha.md::37" in last.text


def test_wrong_lane_moves_the_second_shards_owned_change_to_the_first_child() -> None:
    talk = Talk("edit-wrong-lane", PARENT_TASK)
    prompts = [c.input["prompt"] for c in talk.next().calls]
    assert "ALSO=shards/beta.md" in prompts[0] and "ALSO" not in prompts[1] + prompts[2]
    first = _child("edit-wrong-lane", extra=" ALSO=shards/beta.md")
    first.answer(first.next())
    beta = ORACLE.solution("beta.md") or ()
    assert _edits(first.next()) == _as_calls([*ALPHA, beta[0]])
    second = _child("edit-wrong-lane", "beta", 1)
    second.answer(second.next())
    assert _edits(second.next()) == _as_calls([beta[1]])  # its changelog line only


def test_edit_scripts_say_they_play_only_on_edit_fixtures() -> None:
    only = {name for name, s in CLAUDE_SCRIPTS.items() if s.edit_only}
    assert only == {"edit-parent", "edit-wrong-lane"}
    assert json.loads((EDIT_TINY / "fixture.json").read_text())["kind"] == "edit"


def test_a_silent_child_changes_nothing() -> None:
    talk = _child("silent-child")
    talk.answer(talk.next())
    last = talk.next()
    assert not last.calls and "ANSWER" not in last.text

"""The scripts that answer the resident drive's question, played at the conversation level.

``early-exit-fanin`` ends the parent's turn until every child's reply is in its conversation
(the product shows each as a ``[from child:NAME]`` user message), then writes;
``poll-forever`` never writes. Their verdicts differ by drive (``Script.under``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripted_model import Oracle
from scripted_model.conversation import Conversation
from scripted_model.scripts import SCRIPTS, Text, ToolCall, next_action

TINY = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny"
ROOT_TASK = (TINY / "task.txt").read_text()
ORACLE = Oracle.from_fixture_dirs([TINY])
TOOLS = [{"type": "function", "function": {"name": "ipython", "parameters": {}}}]
SHARDS = ("shard-a", "shard-b", "shard-c")


def _call(code: str) -> dict[str, Any]:
    args = json.dumps({"code": code})
    call = {"id": "c", "type": "function", "function": {"name": "ipython", "arguments": args}}
    return {"role": "assistant", "tool_calls": [call]}


def _reply(shard: str) -> dict[str, Any]:
    answer = ORACLE.answer(f"{shard}.txt")
    text = f"[from child:worker-{shard}]\nstatus: finished\n\n{shard}.txt: {answer}"
    return {"role": "user", "content": text}


def _play(script: str, messages: list[dict[str, Any]]) -> Text | ToolCall:
    conv = Conversation.from_request({"messages": messages, "tools": TOOLS})
    action = next_action(SCRIPTS[script], conv, ORACLE)
    assert isinstance(action, Text | ToolCall)
    return action


def test_early_exit_fanin_ends_its_turn_until_every_reply_is_in_then_writes() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": ROOT_TASK}]
    spawn = _play("early-exit-fanin", messages)
    assert isinstance(spawn, ToolCall) and spawn.spawns
    messages += [_call(spawn.code), {"role": "tool", "content": "spawned"}]
    for shard in SHARDS:
        ended = _play("early-exit-fanin", messages)
        assert isinstance(ended, Text) and "end my turn" in ended.text
        # Every child exists on disk before the turn ends: the one-shot teardown is not a race.
        assert ended.wait_for_children == tuple(f"shards/{s}.txt" for s in SHARDS)
        messages += [{"role": "assistant", "content": ended.text}, _reply(shard)]
    write = _play("early-exit-fanin", messages)
    assert isinstance(write, ToolCall) and "combined-index.md" in write.code
    for shard in SHARDS:
        assert f"{shard}.txt: {ORACLE.answer(f'{shard}.txt')}" in write.code
    messages += [_call(write.code), {"role": "tool", "content": "ok"}]
    done = _play("early-exit-fanin", messages)
    assert isinstance(done, Text) and "Wrote" in done.text


def test_poll_forever_polls_even_once_every_reply_is_in() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": ROOT_TASK}]
    spawn = _play("poll-forever", messages)
    assert isinstance(spawn, ToolCall)
    messages += [_call(spawn.code), {"role": "tool", "content": "spawned"}]
    messages += [_reply(s) for s in SHARDS]
    for _ in range(5):
        poll = _play("poll-forever", messages)
        assert isinstance(poll, ToolCall) and "scripted:poll" in poll.code
        messages += [_call(poll.code), {"role": "tool", "content": "all finished"}]


def test_the_verdicts_differ_by_drive_only_where_the_children_outlive_the_turn() -> None:
    fanin, early, honest = SCRIPTS["early-exit-fanin"], SCRIPTS["early-exit"], SCRIPTS["honest"]
    assert fanin.under("one-shot") == ("unresolved", ("coverage", "receipts", "provenance"))
    assert fanin.under("resident") == ("resolved", ())
    assert early.under("resident") == ("unresolved", ("coverage", "provenance"))
    assert honest.under("resident") == honest.under("one-shot") == ("resolved", ())
    assert not SCRIPTS["poll-forever"].selftest

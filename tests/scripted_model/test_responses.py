"""The scripted Responses API (what Codex speaks) over a real loopback socket: the SSE
answer, the usage it bills, and the Codex scripts' turns under both multi-agent protocols,
each derived from the request alone."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripted_model import Oracle, ScriptedModelServer
from scripted_model.codex_scripts import MAX_LIVE, MAX_RUNNING_V2, V1_NAMESPACE, V2_NAMESPACE
from scripted_model.server import CODEX_RESPONSES_API

DATA = Path(__file__).resolve().parent.parent / "data" / "fixtures"
TINY = DATA / "tiny"
WIDE = Path(__file__).resolve().parents[2] / "fixtures" / "json-events"


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(Oracle.from_fixture_dirs([TINY, WIDE])) as srv:
        yield srv


def _task(fixture: Path) -> str:
    return (fixture / "task.txt").read_text()


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _tools(namespace: str) -> list[dict[str, Any]]:
    return [
        {"type": "function", "name": "exec_command", "parameters": {}},
        {"type": "namespace", "name": namespace, "tools": []},
    ]


def _body(model: str, *items: dict[str, Any], namespace: str = V1_NAMESPACE) -> dict[str, Any]:
    context = _user("<environment_context>\n  <cwd>/work/repo</cwd>\n</environment_context>")
    return {
        "model": model,
        "stream": True,
        "store": False,
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "sys"}],
            },
            context,
            *items,
        ],
        "tools": _tools(namespace),
        "prompt_cache_key": "k",
    }


def _post(srv: ScriptedModelServer, body: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
    req = urllib.request.Request(
        srv.base_url + "/responses",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
            status = resp.status
    except urllib.error.HTTPError as exc:
        return exc.code, [json.loads(exc.read())]
    events = [json.loads(ln[6:]) for ln in raw.decode().splitlines() if ln.startswith("data: ")]
    return status, events


def _output(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["item"] for e in events if e["type"] == "response.output_item.done"]


def _calls(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [i for i in _output(events) if i["type"] == "function_call" and i["name"] == name]


def test_unknown_model_is_a_404_like_the_real_api(server: ScriptedModelServer) -> None:
    status, (body,) = _post(server, _body("gpt-none", _user("hi")))
    assert status == 404 and body["error"]["code"] == "model_not_found"
    assert server.requests_served() == 0


def test_the_answer_streams_as_responses_events_and_bills_subsets_inside_totals(
    server: ScriptedModelServer,
) -> None:
    status, events = _post(server, _body("scripted-honest", _user(_task(TINY))))
    assert status == 200
    kinds = [e["type"] for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert kinds.count("response.output_item.added") == kinds.count("response.output_item.done")
    usage = events[-1]["response"]["usage"]
    cached = usage["input_tokens_details"]["cached_tokens"]
    reasoning = usage["output_tokens_details"]["reasoning_tokens"]
    assert 0 < cached < usage["input_tokens"] and 0 < reasoning < usage["output_tokens"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    bill = server.billed("scripted-honest", api=CODEX_RESPONSES_API)
    assert (bill.input_tokens, bill.cache_read_tokens, bill.output_tokens) == (
        usage["input_tokens"] - cached,
        cached,
        usage["output_tokens"],
    )
    assert bill.total == usage["total_tokens"] and bill.requests == 1


def test_the_first_protocols_parent_spawns_a_wave_naming_each_worker(
    server: ScriptedModelServer,
) -> None:
    _, events = _post(server, _body("honest", _user(_task(WIDE))))
    spawns = _calls(events, "spawn_agent")
    assert len(spawns) == MAX_LIVE and {s["namespace"] for s in spawns} == {V1_NAMESPACE}
    first = json.loads(spawns[0]["arguments"])["message"]
    assert (
        first.startswith("Worker: worker-events-01\n") and "SHARD=shards/events-01.jsonl" in first
    )


def test_the_second_protocols_parent_names_task_names_and_runs_three(
    server: ScriptedModelServer,
) -> None:
    _, events = _post(server, _body("honest", _user(_task(WIDE)), namespace=V2_NAMESPACE))
    spawns = [json.loads(s["arguments"]) for s in _calls(events, "spawn_agent")]
    assert len(spawns) == MAX_RUNNING_V2
    assert [s["task_name"] for s in spawns] == [
        "worker_events_01",
        "worker_events_02",
        "worker_events_03",
    ]
    assert all(s["fork_turns"] == "none" for s in spawns)


def _spawned(events: list[dict[str, Any]], ids: list[str]) -> list[dict[str, Any]]:
    """The parent's spawn calls and Codex's answers to them (child ``ids``)."""
    items: list[dict[str, Any]] = []
    for call, child in zip(_calls(events, "spawn_agent"), ids, strict=True):
        items.append(call)
        out = json.dumps({"agent_id": child, "nickname": "Ada"})
        items.append({"type": "function_call_output", "call_id": call["call_id"], "output": out})
    return items


def test_the_parent_waits_then_writes_what_its_children_said(server: ScriptedModelServer) -> None:
    task = _user(_task(TINY))
    _, first = _post(server, _body("honest", task))
    ids = ["c1", "c2", "c3"]
    history = [task, *_spawned(first, ids)]
    _, waiting = _post(server, _body("honest", *history))
    (wait,) = _calls(waiting, "wait_agent")
    assert json.loads(wait["arguments"])["targets"] == ids
    said = {
        c: f"done\nANSWER::shard-{x}.txt::{n}"
        for c, x, n in zip(ids, "abc", (3, 5, 6), strict=True)
    }
    status = {"status": {c: {"completed": t} for c, t in said.items()}, "timed_out": False}
    history += [
        wait,
        {"type": "function_call_output", "call_id": wait["call_id"], "output": json.dumps(status)},
    ]
    _, writing = _post(server, _body("honest", *history))
    (write,) = _calls(writing, "exec_command")
    cmd = json.loads(write["arguments"])["cmd"]
    assert "- shard-a.txt: 3\n- shard-b.txt: 5\n- shard-c.txt: 6\n" in cmd


def test_a_child_reads_its_shard_then_answers_from_the_oracle(server: ScriptedModelServer) -> None:
    spawn = "Worker: worker-shard-b\nRead the file shards/shard-b.txt ...\nSHARD=shards/shard-b.txt INDEX=1 ATTEMPT=1"
    _, first = _post(server, _body("honest", _user(spawn)))
    (read,) = _calls(first, "exec_command")
    assert json.loads(read["arguments"])["cmd"] == "cat shards/shard-b.txt"
    history = [
        _user(spawn),
        read,
        {"type": "function_call_output", "call_id": read["call_id"], "output": "x"},
    ]
    _, final = _post(server, _body("honest", *history))
    (message,) = _output(final)
    assert message["content"][0]["text"].endswith("ANSWER::shard-b.txt::5")


def test_a_second_protocol_child_takes_its_task_from_the_agent_message(
    server: ScriptedModelServer,
) -> None:
    payload = "Worker: worker-shard-c\nSHARD=shards/shard-c.txt INDEX=2 ATTEMPT=1"
    task = {
        "type": "agent_message",
        "author": "/root",
        "recipient": "/root/worker_shard_c",
        "content": [
            {
                "type": "input_text",
                "text": "Message Type: NEW_TASK\nTask name: /root/worker_shard_c\nSender: /root\nPayload:\n",
            },
            {"type": "encrypted_content", "encrypted_content": payload},
        ],
    }
    _, events = _post(server, _body("honest", task, namespace=V2_NAMESPACE))
    (read,) = _calls(events, "exec_command")
    assert json.loads(read["arguments"])["cmd"] == "cat shards/shard-c.txt"

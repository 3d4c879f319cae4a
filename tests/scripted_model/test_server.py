"""The scripted model server over a real loopback socket: routing, SSE, scripts, counts."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripted_model import Oracle, ScriptedModelServer

TINY = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny"
ROOT_TASK = (TINY / "task.txt").read_text()
TOOLS = [{"type": "function", "function": {"name": "ipython", "parameters": {}}}]


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(Oracle.from_fixture_dirs([TINY])) as srv:
        yield srv


def _post(srv: ScriptedModelServer, body: dict[str, Any]) -> tuple[int, bytes]:
    req = urllib.request.Request(
        srv.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _delta(raw: bytes) -> dict[str, Any]:
    events = [line[6:] for line in raw.decode().splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    return json.loads(events[0])["choices"][0]["delta"]


def _code(delta: dict[str, Any]) -> str:
    return json.loads(delta["tool_calls"][0]["function"]["arguments"])["code"]


def _request(model: str, *messages: dict[str, Any], tools: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "stream": True, "messages": list(messages)}
    if tools:
        body["tools"] = TOOLS
    return body


def test_unknown_model_is_a_404_like_a_real_provider(server: ScriptedModelServer) -> None:
    status, raw = _post(server, _request("no-such-model", {"role": "user", "content": "hi"}))
    assert status == 404 and "does not exist" in json.loads(raw)["error"]["message"]
    assert server.requests_served() == 0


@pytest.mark.parametrize(
    ("model", "spawned"),
    [
        pytest.param("honest", ["worker-shard-a", "worker-shard-b", "worker-shard-c"], id="honest"),
        pytest.param("helper-names", ["helper-1", "helper-2", "helper-3"], id="helper-names"),
    ],
)
def test_the_parent_spawns_from_the_task(
    server: ScriptedModelServer, model: str, spawned: list[str]
) -> None:
    status, raw = _post(server, _request(model, {"role": "user", "content": ROOT_TASK}))
    code = _code(_delta(raw))
    assert status == 200 and "await rlm(" in code
    assert [n for n in spawned if f"name={n!r}" in code] == spawned
    assert server.requests_served(model, "tiny") == 1


def test_no_spawn_answers_itself_from_the_oracle(server: ScriptedModelServer) -> None:
    _, raw = _post(server, _request("no-spawn", {"role": "user", "content": ROOT_TASK}))
    code = _code(_delta(raw))
    assert "rlm(" not in code and "- shard-a.txt: 3" in code


@pytest.mark.parametrize(
    ("model", "reply"),
    [
        pytest.param("honest", "shard-a.txt: 3", id="honest"),
        pytest.param("wrong-answer", "shard-a.txt: 4", id="wrong-answer"),
    ],
)
def test_a_child_replies_to_its_parent(server: ScriptedModelServer, model: str, reply: str) -> None:
    task = "[task from parent]\n\nRead it.\nSHARD=shards/shard-a.txt INDEX=0 ATTEMPT=1"
    _, raw = _post(server, _request(model, {"role": "user", "content": task}))
    code = _code(_delta(raw))
    assert f"agent_message.send({reply!r}, receiver_role='parent')" in code


def test_silent_child_ends_without_replying(server: ScriptedModelServer) -> None:
    task = "[task from parent]\n\nSHARD=shards/shard-a.txt INDEX=0 ATTEMPT=1"
    _, raw = _post(server, _request("silent-child", {"role": "user", "content": task}))
    assert "tool_calls" not in _delta(raw)


def test_internal_requests_get_a_harmless_answer(server: ScriptedModelServer) -> None:
    status, raw = _post(
        server, _request("honest", {"role": "user", "content": ROOT_TASK}, tools=False)
    )
    assert status == 200 and _delta(raw)["content"]


def test_early_exit_ends_the_turn_only_once_every_child_has_asked(
    server: ScriptedModelServer,
) -> None:
    """The parent's last answer waits for a first request from each child, so every child
    exists on disk before the CLI exits and tears them down (a deterministic row)."""
    import threading
    import time

    root = {"role": "user", "content": ROOT_TASK}
    _, raw = _post(server, _request("early-exit", root))
    code = _code(_delta(raw))
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "ipython", "arguments": json.dumps({"code": code})},
    }
    turn = [root, {"role": "assistant", "tool_calls": [call]}, {"role": "tool", "content": "ok"}]
    answered: list[float] = []

    def parent_ends_its_turn() -> None:
        _, raw = _post(server, _request("early-exit", *turn))
        assert "end my turn" in _delta(raw)["content"]
        answered.append(time.monotonic())

    parent = threading.Thread(target=parent_ends_its_turn)
    parent.start()
    time.sleep(0.5)
    assert not answered  # no child has asked yet
    for i, shard in enumerate(("shard-a", "shard-b", "shard-c")):
        task = f"[task from parent]\n\nRead it.\nSHARD=shards/{shard}.txt INDEX={i} ATTEMPT=1"
        # Taken before asking: the parent may be answered before this child reads its reply.
        last_child_asks = time.monotonic()
        _post(server, _request("early-exit", {"role": "user", "content": task}))
    parent.join(timeout=10)
    assert answered and answered[0] >= last_child_asks


def _usage(raw: bytes) -> dict[str, Any]:
    events = [line[6:] for line in raw.decode().splitlines() if line.startswith("data: ")]
    return json.loads(events[-2])["usage"]


def test_what_it_billed_is_booked_by_model_caller_and_fixture(server: ScriptedModelServer) -> None:
    _, parent = _post(server, _request("honest", {"role": "user", "content": ROOT_TASK}))
    task = "[task from parent]\n\nRead it.\nSHARD=shards/shard-a.txt INDEX=0 ATTEMPT=1"
    _, child = _post(server, _request("honest", {"role": "user", "content": task}))
    parent_usage, child_usage = _usage(parent), _usage(child)
    assert server.billed("honest", caller="parent").total == parent_usage["total_tokens"]
    assert server.billed("honest", caller="child").total == child_usage["total_tokens"]
    both = server.billed("honest", "tiny")
    assert (both.total, both.requests) == (
        parent_usage["total_tokens"] + child_usage["total_tokens"],
        2,
    )
    assert server.billed("no-spawn").requests == 0


def _messages(srv: ScriptedModelServer, body: dict[str, Any]) -> bytes:
    req = urllib.request.Request(
        srv.base_url + "/messages",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read()


def test_messages_bill_cache_reads_and_writes_and_stream_the_final_output(
    server: ScriptedModelServer,
) -> None:
    """A request marking prompt caching is billed a share of its input as cache reads and
    writes; message_start streams the input side with a placeholder output of 1, and
    message_delta the final output count, as the Messages API does."""
    content = [{"type": "text", "text": ROOT_TASK, "cache_control": {"type": "ephemeral"}}]
    body = {"model": "no-spawn", "stream": True, "max_tokens": 100,
            "messages": [{"role": "user", "content": content}]}  # fmt: skip
    raw = _messages(server, body)
    data = [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]
    start = next(d for d in data if d["type"] == "message_start")["message"]["usage"]
    delta = next(d for d in data if d["type"] == "message_delta")["usage"]
    assert start["output_tokens"] == 1 and delta["output_tokens"] > 1
    assert start["cache_read_input_tokens"] > 0 and start["cache_creation_input_tokens"] > 0
    bill = server.billed("no-spawn", caller="parent")
    assert (bill.input_tokens, bill.cache_read_tokens, bill.cache_write_tokens) == (
        start["input_tokens"],
        start["cache_read_input_tokens"],
        start["cache_creation_input_tokens"],
    )
    assert bill.output_tokens == delta["output_tokens"] and bill.requests == 1
    plain = {**body, "messages": [{"role": "user", "content": ROOT_TASK}]}
    _messages(server, plain)
    assert server.billed("no-spawn").requests == 2
    assert server.billed("no-spawn").cache_read_tokens == bill.cache_read_tokens  # none added


def test_a_body_on_an_unknown_route_is_read_so_the_connection_stays_usable(
    server: ScriptedModelServer,
) -> None:
    """A client's next request on the same keep-alive connection must not be parsed out of
    the unread rest of a body the server refused (Claude Code under load: "API Error: 414"
    for a subagent after a 404 with a 100 KB body)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    big = json.dumps({"messages": [{"role": "user", "content": "x" * 100_000}]})
    conn.request("POST", "/v1/messages/count_tokens", body=big)
    first = conn.getresponse()
    first.read()
    assert first.status == 404
    body = json.dumps(_request("honest", {"role": "user", "content": ROOT_TASK}))
    conn.request("POST", "/v1/chat/completions", body=body)
    second = conn.getresponse()
    assert second.status == 200, second.read()[:200]
    second.read()
    conn.close()

"""The scripted server's fault plan over a real loopback socket: what fails, how, and that
a failed request bills nothing."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripted_model import Oracle, ScriptedModelServer
from scripted_model.faults import FaultSpecError, parse_faults

TINY = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny"
ROOT_TASK = (TINY / "task.txt").read_text()
TOOLS = [{"type": "function", "function": {"name": "ipython", "parameters": {}}}]
CHILD = "[task from parent]\n\nRead it.\nSHARD=shards/shard-a.txt INDEX=0 ATTEMPT=1"


def serve(spec: str, seed: int = 0) -> ScriptedModelServer:
    return ScriptedModelServer(Oracle.from_fixture_dirs([TINY]), faults=parse_faults(spec, seed))


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[ScriptedModelServer]:
    with serve(request.param) as srv:
        yield srv


def post(
    srv: ScriptedModelServer, content: str, system: str = "cwd /a", timeout: float = 10
) -> tuple[int, dict[str, str], bytes]:
    """POST one chat completion; (status, headers, body) — status 0 when the connection
    broke before a whole answer."""
    body = {
        "model": "honest",
        "stream": True,
        "tools": TOOLS,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": content}],
    }
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=timeout)
    try:
        conn.request(
            "POST", "/v1/chat/completions", json.dumps(body), {"content-type": "application/json"}
        )
        resp = conn.getresponse()
        try:
            data = resp.read()
        except http.client.IncompleteRead as exc:
            return 0, dict(resp.getheaders()), exc.partial
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    except (http.client.RemoteDisconnected, ConnectionError):
        return 0, {}, b""
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param("exploded", "unknown kind 'exploded'", id="unknown-kind"),
        pytest.param("overloaded,scope=everyone", "scope is any, parent or children", id="scope"),
        pytest.param("overloaded,first=0", "a count of at least 1", id="first"),
        pytest.param("overloaded,share=2", "a share in [0, 1]", id="share"),
        pytest.param("overloaded,window=5-2", "0 <= A < B", id="window"),
        pytest.param("overloaded,colour=red", "unknown option", id="option"),
        pytest.param("refused", "needs window=A-B", id="refused-needs-a-window"),
    ],
)
def test_a_bad_plan_is_refused_naming_the_part(spec: str, message: str) -> None:
    with pytest.raises(FaultSpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_faults(spec)


@pytest.mark.parametrize(
    "server", ["overloaded,retry-after=7;rate_limited,scope=children,fail-fast"], indirect=True
)
def test_an_http_fault_carries_its_status_type_and_headers(server: ScriptedModelServer) -> None:
    status, headers, raw = post(server, ROOT_TASK)
    assert status == 529 and headers["retry-after"] == "7" and "x-should-retry" not in headers
    assert json.loads(raw)["error"]["type"] == "overloaded_error"
    assert server.faults_served(caller="parent", kind="overloaded") == 1
    assert server.billed().requests == 0 and server.requests_served() == 0


@pytest.mark.parametrize("server", ["rate_limited,scope=children,fail-fast"], indirect=True)
def test_a_scope_takes_only_its_callers(server: ScriptedModelServer) -> None:
    assert post(server, ROOT_TASK)[0] == 200
    status, headers, _ = post(server, CHILD)
    assert (status, headers["x-should-retry"]) == (429, "false")
    assert (
        server.faults_served(caller="child") == 1 and server.billed(caller="parent").requests == 1
    )


@pytest.mark.parametrize("server", ["overloaded,scope=children,first=1"], indirect=True)
def test_first_n_counts_each_conversation_apart(server: ScriptedModelServer) -> None:
    """Each child's first request fails and its retry is answered; a child of another item
    (another working directory) is a conversation of its own."""
    assert post(server, CHILD)[0] == 529
    assert post(server, CHILD)[0] == 200  # the retry
    assert post(server, CHILD, system="cwd /b")[0] == 529
    assert server.faults_served() == 2 and server.billed().requests == 1


@pytest.mark.parametrize("server", ["server_error,scope=parent,phase=write,times=1"], indirect=True)
def test_a_phase_takes_the_request_whose_answer_would_write(server: ScriptedModelServer) -> None:
    no_spawn = {
        "model": "no-spawn",
        "stream": True,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": ROOT_TASK}],
    }
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    for expected in (500, 200):  # no-spawn's first answer is the write cell; once only
        conn.request(
            "POST",
            "/v1/chat/completions",
            json.dumps(no_spawn),
            {"content-type": "application/json"},
        )
        resp = conn.getresponse()
        resp.read()
        assert resp.status == expected
    conn.close()
    assert post(server, ROOT_TASK)[0] == 200  # honest's first answer spawns: another phase


@pytest.mark.slow
def test_a_share_fails_the_same_requests_for_the_same_seed() -> None:
    def pattern(seed: int) -> list[int]:
        with serve("overloaded,share=0.5", seed) as srv:
            return [post(srv, ROOT_TASK, system=f"cwd /{n}")[0] for n in range(40)]

    first, again, other = pattern(1), pattern(1), pattern(2)
    assert first == again and first != other
    assert 8 <= first.count(529) <= 32


@pytest.mark.parametrize("server", ["stream_cut,times=1"], indirect=True)
def test_a_cut_stream_breaks_off_after_its_first_chunk(server: ScriptedModelServer) -> None:
    status, _, partial = post(server, ROOT_TASK)
    assert status == 0 and partial.startswith(b"data: ") and b"[DONE]" not in partial
    assert server.billed().requests == 0 and server.faults_served(kind="stream_cut") == 1
    assert post(server, ROOT_TASK)[0] == 200


@pytest.mark.parametrize("server", ["drop,times=1"], indirect=True)
def test_a_drop_closes_the_connection_without_an_answer(server: ScriptedModelServer) -> None:
    assert post(server, ROOT_TASK) == (0, {}, b"")
    assert post(server, ROOT_TASK)[0] == 200


@pytest.mark.slow
@pytest.mark.parametrize("server", ["stall,times=1,stall-s=30"], indirect=True)
def test_a_stall_sends_its_headers_then_silence(server: ScriptedModelServer) -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        post(server, ROOT_TASK, timeout=1.0)
    assert 0.9 <= time.monotonic() - started < 10
    assert server.faults_served(kind="stall") == 1


@pytest.mark.slow
def test_a_refused_window_closes_the_port_then_listens_again() -> None:
    with serve("refused,window=0-1.5") as srv:
        time.sleep(0.3)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", srv.port), timeout=2).close()
        time.sleep(1.6)
        assert post(srv, ROOT_TASK)[0] == 200


def test_messages_faults_fail_the_same_way() -> None:
    """The Messages API (Claude Code, opencode) serves the plan too, with Anthropic's error
    body; a cut stream delivers a message_start with no usage billed."""
    body: dict[str, Any] = {
        "model": "honest",
        "stream": True,
        "tools": [{"name": "Agent"}],
        "system": "Primary working directory: /a",
        "messages": [{"role": "user", "content": ROOT_TASK}],
    }
    with serve("overloaded,times=1;stream_cut,times=1") as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        conn.request("POST", "/v1/messages", json.dumps(body), {"content-type": "application/json"})
        resp = conn.getresponse()
        assert resp.status == 529 and json.loads(resp.read())["error"]["type"] == "overloaded_error"
        conn.request("POST", "/v1/messages", json.dumps(body), {"content-type": "application/json"})
        resp = conn.getresponse()
        with pytest.raises(http.client.IncompleteRead) as cut:
            resp.read()
        assert b"message_start" in cut.value.partial and b"message_stop" not in cut.value.partial
        conn.close()
        assert srv.billed().requests == 0 and srv.faults_served() == 2

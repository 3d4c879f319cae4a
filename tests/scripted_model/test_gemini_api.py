"""The scripted Gemini API (what Gemini CLI speaks) over a real loopback socket: the routes,
the SSE and JSON answers, the usage it bills, Google's error bodies for faults, and each
script's turns, derived from hand-built requests alone (shaped as 0.61.0 sends them)."""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gemini_helpers import body, model_calls, results, user

from scripted_model import Oracle, ScriptedModelServer
from scripted_model.faults import parse_faults
from scripted_model.gemini_edits import EditLocks
from scripted_model.gemini_scripts import GEMINI_SCRIPTS
from scripted_model.scripts import BEHAVIOURS
from scripted_model.server import API_DESCRIPTIONS, GEMINI_API, SCRIPTS_BY_API

DATA = Path(__file__).resolve().parent.parent / "data" / "fixtures"
TINY = DATA / "tiny"
TINY_EDIT = DATA / "tiny-edit"
#: tiny's shards, workers and answers.
SHARDS = (("shard-a.txt", "worker-shard-a", 3), ("shard-b.txt", "worker-shard-b", 5))
SHARDS += (("shard-c.txt", "worker-shard-c", 6),)
CWD = "/work/repo"


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(Oracle.from_fixture_dirs([TINY, TINY_EDIT])) as srv:
        yield srv


def _root(srv: ScriptedModelServer) -> str:
    return f"http://127.0.0.1:{srv.port}"


def _post(
    srv: ScriptedModelServer,
    model: str,
    payload: dict[str, Any],
    stream: bool = True,
    key: str | None = "scripted-no-key",
) -> tuple[int, list[dict[str, Any]]]:
    """POST one request; the status and the events (SSE) or the one JSON body."""
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    headers = {"content-type": "application/json"}
    if key is not None:
        headers["x-goog-api-key"] = key
    req = urllib.request.Request(
        f"{_root(srv)}/v1beta/models/{model}:{method}",
        data=json.dumps(payload).encode(),
        headers=headers,
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read().decode()
            status = resp.status
    except urllib.error.HTTPError as exc:
        return exc.code, [json.loads(exc.read())]
    if not stream:
        return status, [json.loads(raw)]
    assert raw.endswith("\r\n\r\n")
    return status, [json.loads(e[6:]) for e in raw.split("\r\n\r\n") if e.startswith("data: ")]


def _parts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for e in events for p in e["candidates"][0]["content"]["parts"]]


def _calls(events: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (p["functionCall"]["name"], p["functionCall"]["args"])
        for p in _parts(events)
        if "functionCall" in p
    ]


def _task(fixture: Path = TINY) -> str:
    return (fixture / "task.txt").read_text()


def _child_prompt(srv: ScriptedModelServer, model: str, index: int) -> str:
    """The prompt the scripted parent gives the child of shard ``index``."""
    _, events = _post(srv, model, body(user(_task())))
    prompts = [a["prompt"] for n, a in _calls(events) if n == "invoke_agent"]
    return prompts[index]


def _finished(result: str) -> str:
    return f"Subagent 'shard-worker' finished.\nTermination Reason: GOAL\nResult:\n{result}"


# --- the protocol ------------------------------------------------------------------------


def test_registered_as_the_gemini_api() -> None:
    assert GEMINI_API == "gemini-api:gemini"
    assert SCRIPTS_BY_API[GEMINI_API] == GEMINI_SCRIPTS
    assert "streamGenerateContent" in API_DESCRIPTIONS[GEMINI_API]
    assert set(GEMINI_SCRIPTS) <= set(BEHAVIOURS)
    # No-wait has no Gemini form: the parent's next request waits for every child.
    assert "no-wait" not in GEMINI_SCRIPTS


def test_parent_fans_out_one_invoke_agent_per_shard(server: ScriptedModelServer) -> None:
    status, events = _post(server, "scripted-honest", body(user(_task())))
    assert status == 200
    last = events[-1]
    assert last["candidates"][0]["finishReason"] == "STOP"
    assert last["modelVersion"] == "scripted-honest"
    calls = _calls(events)
    assert [n for n, _ in calls] == ["invoke_agent"] * 3
    for (_name, args), (file, worker, _) in zip(calls, SHARDS, strict=True):
        assert args["agent_name"] == "shard-worker"
        first, _, rest = args["prompt"].partition("\n")
        assert first == f"Worker: {worker}"
        assert f"shards/{file}" in rest and "complete_task" in rest


def test_the_usage_is_the_bill(server: ScriptedModelServer) -> None:
    _, events = _post(server, "scripted-honest", body(user(_task())))
    usage = events[-1]["usageMetadata"]
    assert usage["cachedContentTokenCount"] > 0 and usage["thoughtsTokenCount"] > 0
    assert usage["totalTokenCount"] == (
        usage["promptTokenCount"] + usage["candidatesTokenCount"] + usage["thoughtsTokenCount"]
    )
    bill = server.billed(api=GEMINI_API, model="scripted-honest", caller="parent")
    assert bill.input_tokens == usage["promptTokenCount"] - usage["cachedContentTokenCount"]
    assert bill.cache_read_tokens == usage["cachedContentTokenCount"]
    assert bill.output_tokens == usage["candidatesTokenCount"] + usage["thoughtsTokenCount"]
    assert bill.requests == 1
    assert server.requests_served(api=GEMINI_API, model="scripted-honest", fixture="tiny") == 1


def test_a_child_reads_its_shard_then_completes_with_the_oracle_value(
    server: ScriptedModelServer,
) -> None:
    prompt = _child_prompt(server, "scripted-honest", 1)
    _, events = _post(server, "scripted-honest", body(user(prompt), child=True))
    assert _calls(events) == [("read_file", {"file_path": f"{CWD}/shards/shard-b.txt"})]
    turn = model_calls(*_calls(events))
    _, events = _post(
        server,
        "scripted-honest",
        body(user(prompt), turn, results(("read_file", "b\nb\n")), child=True),
    )
    assert _calls(events) == [("complete_task", {"result": "ANSWER::shard-b.txt::5"})]
    assert server.billed(api=GEMINI_API, caller="child").requests == 2


def test_a_child_prompt_without_a_job_line_still_names_its_shard(
    server: ScriptedModelServer,
) -> None:
    # As the lead's task wording has it, with no scripted job line: the shard's index comes
    # from its fixture's manifest (shard-a is the first: wrong-answer's wrong one).
    prompt = (
        "Worker: worker-shard-a\nRead the file shards/shard-a.txt and answer this question "
        "exactly. End by calling complete_task with one line of the form ANSWER::<file>::<value>"
    )
    read = model_calls(("read_file", {"file_path": f"{CWD}/shards/shard-a.txt"}))
    payload = body(user(prompt), read, results(("read_file", "a")), child=True)
    _, events = _post(server, "scripted-wrong-answer", payload)
    assert _calls(events) == [("complete_task", {"result": "ANSWER::shard-a.txt::4"})]


def test_the_parent_writes_every_answer_then_ends(server: ScriptedModelServer) -> None:
    _, events = _post(server, "scripted-honest", body(user(_task())))
    spawn = model_calls(*_calls(events), text="I delegate.")
    back = results(*(("invoke_agent", _finished(f"ANSWER::{f}::{v}")) for f, _, v in SHARDS))
    _, events = _post(server, "scripted-honest", body(user(_task()), spawn, back))
    [(name, args)] = _calls(events)
    assert name == "write_file"
    assert args == {
        "file_path": f"{CWD}/combined-index.md",
        "content": "- shard-a.txt: 3\n- shard-b.txt: 5\n- shard-c.txt: 6\n",
    }
    write = model_calls((name, args))
    payload = body(user(_task()), spawn, back, write, results(("write_file", "ok")))
    _, events = _post(server, "scripted-honest", payload)
    assert _calls(events) == [] and "Wrote combined-index.md" in _parts(events)[0]["text"]


def test_generate_content_answers_one_json_and_other_models_are_counted(
    server: ScriptedModelServer,
) -> None:
    # The client's own utility call (a router, an edit fixer) for a model of its own.
    payload = body(user("route this"), tools=())
    payload["generationConfig"] = {"responseMimeType": "application/json"}
    status, [answer] = _post(server, "gemini-3-flash-preview", payload, stream=False)
    assert status == 200
    assert answer["candidates"][0]["content"]["parts"] == [{"text": "{}"}]
    assert answer["usageMetadata"]["promptTokenCount"] > 0
    assert server.requests_served(api=GEMINI_API, model="gemini-3-flash-preview") == 1
    assert server.requests_served(api=GEMINI_API, model="scripted-honest") == 0
    assert server.billed(api=GEMINI_API, caller="internal").requests == 1


def test_unknown_script_and_missing_key_are_googles_errors(server: ScriptedModelServer) -> None:
    status, [answer] = _post(server, "scripted-nonsense", body(user(_task())))
    assert status == 404 and answer["error"]["status"] == "NOT_FOUND"
    status, [answer] = _post(server, "scripted-honest", body(user(_task())), key=None)
    assert status == 403 and answer["error"]["status"] == "PERMISSION_DENIED"
    assert server.requests_served() == 0


# --- faults --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "status", "name"),
    [
        pytest.param("rate_limited,retry-after=7", 429, "RESOURCE_EXHAUSTED", id="429"),
        pytest.param("server_error", 500, "INTERNAL", id="500"),
        pytest.param("unavailable", 503, "UNAVAILABLE", id="503"),
    ],
)
def test_faults_answer_with_googles_error_body(spec: str, status: int, name: str) -> None:
    with ScriptedModelServer(Oracle.from_fixture_dirs([TINY]), faults=parse_faults(spec)) as srv:
        got, [answer] = _post(srv, "scripted-honest", body(user(_task())))
        assert got == status
        error = answer["error"]
        assert (error["code"], error["status"]) == (status, name)
        if status == 429:
            assert error["details"] == [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}
            ]
        assert srv.faults_served(api=GEMINI_API, caller="parent") == 1
        assert srv.billed().requests == 0


def test_a_cut_stream_sends_headers_and_part_of_an_event() -> None:
    faults = parse_faults("stream_cut,scope=children")
    with ScriptedModelServer(Oracle.from_fixture_dirs([TINY]), faults=faults) as srv:
        prompt = _child_prompt(srv, "scripted-honest", 0)
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        conn.request(
            "POST",
            "/v1beta/models/scripted-honest:streamGenerateContent?alt=sse",
            json.dumps(body(user(prompt), child=True)),
            {"content-type": "application/json", "x-goog-api-key": "k"},
        )
        resp = conn.getresponse()
        assert resp.status == 200
        with pytest.raises(http.client.IncompleteRead) as cut:
            resp.read()
        assert cut.value.partial.startswith(b"data: ")
        assert srv.faults_served(kind="stream_cut", caller="child") == 1
        assert srv.billed(caller="child").requests == 0


# --- the scripts ---------------------------------------------------------------------------


def test_silent_child_ends_in_text_every_time(server: ScriptedModelServer) -> None:
    prompt = _child_prompt(server, "scripted-silent-child", 0)
    read = model_calls(("read_file", {"file_path": f"{CWD}/shards/shard-a.txt"}))
    payload = body(user(prompt), read, results(("read_file", "a")), child=True)
    _, events = _post(server, "scripted-silent-child", payload)
    assert _calls(events) == []
    # The client's grace turn gets plain text again: ERROR_NO_COMPLETE_TASK_CALL.
    payload["contents"] += [{"role": "model", "parts": [{"text": "Finished."}]}, user("grace")]
    _, events = _post(server, "scripted-silent-child", payload)
    assert _calls(events) == []


def test_child_fails_refuses_the_first_childs_requests(server: ScriptedModelServer) -> None:
    prompt = _child_prompt(server, "scripted-child-fails", 0)
    status, [answer] = _post(server, "scripted-child-fails", body(user(prompt), child=True))
    assert status == 400 and answer["error"]["status"] == "INVALID_ARGUMENT"
    assert server.faults_served(kind="scripted", caller="child") == 1
    second = _child_prompt(server, "scripted-child-fails", 1)
    status, _ = _post(server, "scripted-child-fails", body(user(second), child=True))
    assert status == 200


def _workers(events: list[dict[str, Any]]) -> list[str]:
    return [a["prompt"].split("\n", 1)[0] for n, a in _calls(events) if n == "invoke_agent"]


def test_double_spawn_and_helper_names(server: ScriptedModelServer) -> None:
    _, events = _post(server, "scripted-double-spawn", body(user(_task())))
    assert _workers(events) == [f"Worker: {w}" for _, w, _ in SHARDS] + ["Worker: worker-shard-a"]
    _, events = _post(server, "scripted-helper-names", body(user(_task())))
    assert _workers(events) == ["Worker: helper-1", "Worker: helper-2", "Worker: helper-3"]


def test_sequential_starts_one_child_per_answer(server: ScriptedModelServer) -> None:
    contents: list[dict[str, Any]] = [user(_task())]
    for file, worker, value in SHARDS:
        _, events = _post(server, "scripted-sequential", body(*contents))
        assert _workers(events) == [f"Worker: {worker}"]
        contents += [
            model_calls(*_calls(events)),
            results(("invoke_agent", _finished(f"ANSWER::{file}::{value}"))),
        ]
    _, events = _post(server, "scripted-sequential", body(*contents))
    assert [n for n, _ in _calls(events)] == ["write_file"]


def test_no_spawn_and_the_solo_parent_answer_without_children(
    server: ScriptedModelServer,
) -> None:
    _, events = _post(server, "scripted-no-spawn", body(user(_task())))
    assert [n for n, _ in _calls(events)] == ["write_file"]
    solo = (
        "Work alone: do not start, spawn or delegate to any subagent, agent, child\n\n"
        "Shards and questions:\n- shards/shard-a.txt: q\n- shards/shard-b.txt: q\n\n"
        "2. Write the file combined-index.md in the repository root\n"
    )
    contents: list[dict[str, Any]] = [user(solo)]
    for file in ("shard-a.txt", "shard-b.txt"):
        _, events = _post(server, "scripted-honest", body(*contents))
        assert _calls(events) == [("read_file", {"file_path": f"{CWD}/shards/{file}"})]
        contents += [model_calls(*_calls(events)), results(("read_file", "x"))]
    _, events = _post(server, "scripted-honest", body(*contents))
    assert _calls(events)[0][1]["content"] == "- shard-a.txt: 3\n- shard-b.txt: 5\n"
    assert server.requests_served(arm="solo") == 3


# --- edit fixtures ------------------------------------------------------------------------


def test_an_edit_child_replaces_its_change_under_the_lock(server: ScriptedModelServer) -> None:
    _, events = _post(server, "scripted-honest", body(user(_task(TINY_EDIT))))
    prompt = next(a["prompt"] for n, a in _calls(events) if n == "invoke_agent")
    assert "replace" in prompt
    read = model_calls(("read_file", {"file_path": f"{CWD}/shards/double.md"}))
    payload = body(user(prompt), read, results(("read_file", "ticket")), child=True)
    _, events = _post(server, "scripted-honest", payload)
    calls = _calls(events)
    assert {n for n, _ in calls} == {"replace"}
    assert {a["file_path"] for _, a in calls} == {
        f"{CWD}/calc/double.py",
        f"{CWD}/calc/__init__.py",
    }
    assert all(a["instruction"] and a["old_string"] != a["new_string"] for _, a in calls)
    item = f"scripted-honest\0{CWD}"
    assert server.gemini_locks.holder(item) is not None
    done = model_calls(*calls)
    ok = results(*(("replace", "Successfully modified file") for _ in calls))
    _, events = _post(
        server, "scripted-honest", {**payload, "contents": payload["contents"] + [done, ok]}
    )
    assert _calls(events) == [("complete_task", {"result": "ANSWER::double.md::42"})]
    assert server.gemini_locks.holder(item) is None


def test_edit_wrong_lane_reads_then_notes_the_next_shards_file(
    server: ScriptedModelServer,
) -> None:
    _, events = _post(server, "scripted-edit-wrong-lane", body(user(_task(TINY_EDIT))))
    prompt = next(a["prompt"] for n, a in _calls(events) if n == "invoke_agent")
    contents = [
        user(prompt),
        model_calls(("read_file", {"file_path": f"{CWD}/shards/double.md"})),
        results(("read_file", "ticket")),
    ]
    _, events = _post(server, "scripted-edit-wrong-lane", body(*contents, child=True))
    contents += [
        model_calls(*_calls(events)),
        results(*(("replace", "ok") for _ in _calls(events))),
    ]
    _, events = _post(server, "scripted-edit-wrong-lane", body(*contents, child=True))
    assert _calls(events) == [("read_file", {"file_path": f"{CWD}/calc/square.py"})]
    contents += [
        model_calls(*_calls(events)),
        results(("read_file", "def square(x):\n    return x\n")),
    ]
    _, events = _post(server, "scripted-edit-wrong-lane", body(*contents, child=True))
    [(name, args)] = _calls(events)
    assert name == "replace" and args["file_path"] == f"{CWD}/calc/square.py"
    assert args["old_string"] == "    return x"
    assert args["new_string"] == "    return x\n# changed by another shard's worker"


def test_edit_parent_changes_everything_before_it_delegates(server: ScriptedModelServer) -> None:
    _, events = _post(server, "scripted-edit-parent", body(user(_task(TINY_EDIT))))
    calls = _calls(events)
    assert [n for n, _ in calls] == ["replace"] * 6
    contents = [
        user(_task(TINY_EDIT)),
        model_calls(*calls),
        results(*(("replace", "ok") for _ in calls)),
    ]
    _, events = _post(server, "scripted-edit-parent", body(*contents))
    prompts = [a["prompt"] for n, a in _calls(events) if n == "invoke_agent"]
    assert len(prompts) == 2 and all("replace" not in p for p in prompts)


def test_the_edit_lock_serves_one_thread_at_a_time() -> None:
    locks = EditLocks()
    assert locks.acquire("item", "a")
    order: list[str] = []

    def second() -> None:
        locks.acquire("item", "b")
        order.append("b")

    waiter = threading.Thread(target=second)
    waiter.start()
    time.sleep(0.2)
    order.append("a")
    locks.release("item", "a")
    waiter.join(5)
    assert order == ["a", "b"] and locks.holder("item") == "b"
    # A silent holder is taken over after the wait.
    assert not locks.acquire("item", "c", timeout=0.1)
    assert locks.holder("item") == "c"


def test_a_bare_script_name_plays_the_script_and_its_faults() -> None:
    """The selftest's ``scripted/honest`` reaches the client as ``honest``: the same parent,
    and a fault plan scoped to parents applies to it as to ``scripted-honest``."""
    plan = parse_faults("server_error,scope=parent,first=1")
    with ScriptedModelServer(Oracle.from_fixture_dirs([TINY]), faults=plan) as srv:
        failed, _ = _post(srv, "honest", body(user(_task())))
        status, events = _post(srv, "honest", body(user(_task())))
        assert (failed, status) == (500, 200)
        assert [n for n, _ in _calls(events)] == ["invoke_agent"] * 3
        assert srv.faults_served("honest", api=GEMINI_API, caller="parent") == 1
        assert srv.billed("honest", api=GEMINI_API).requests == 1

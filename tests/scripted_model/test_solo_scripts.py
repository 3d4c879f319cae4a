"""A solo twin's task (``run --solo``) on every API the server speaks: whatever the model id,
the scripted model plays a solo parent that reads each shard itself, one call after another,
makes every change on an edit fixture, writes every right answer and starts no subagent.

Each API's conversation is played turn by turn against a copy of the fixture, its tool calls
carried out the way its client would (a read returns the file, an edit or write changes it),
with the harness's own solo prompt; and the server keeps a twin's bill apart from its
item's, though both play one model.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import shutil
import subprocess
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.fixtures import load_fixture
from harness.fixtures.task_text import SOLO_MARKER, solo_task
from scripted_model import Oracle, ScriptedModelServer
from scripted_model.claude_scripts import CLAUDE_SCRIPTS, Reply, next_claude_action
from scripted_model.codex_edits import PATCH_TOOL
from scripted_model.codex_scripts import CODEX_SCRIPTS, V1_NAMESPACE, next_codex_action
from scripted_model.codex_scripts import Reply as CodexReply
from scripted_model.conversation import SOLO_MARKER as SERVED_MARKER
from scripted_model.conversation import Conversation, arm_of, task_jobs
from scripted_model.messages_conversation import MessagesConversation
from scripted_model.opencode_scripts import OPENCODE_SCRIPTS, next_opencode_action
from scripted_model.responses_conversation import ResponsesConversation
from scripted_model.scripts import SCRIPTS, Text, ToolCall, next_action

DATA = Path(__file__).resolve().parents[1] / "data" / "fixtures"
FIXTURES = {"read": DATA / "tiny", "edit": DATA / "tiny-edit"}
ORACLE = Oracle.from_fixture_dirs(FIXTURES.values())
#: The most requests a solo parent of these fixtures makes (a runaway guard).
MAX_TURNS = 16


def _task(kind: str) -> str:
    fixture = load_fixture(FIXTURES[kind])
    return solo_task(fixture.manifest, fixture.task_text)


def _repo(kind: str, tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES[kind], repo)
    return repo


def _manifest(kind: str) -> dict[str, Any]:
    return json.loads((FIXTURES[kind] / "fixture.json").read_text(encoding="utf-8"))


def _answers(kind: str) -> str:
    return "".join(f"- {s['file']}: {s['expected']}\n" for s in _manifest(kind)["shards"])


def _solved(kind: str, repo: Path) -> bool:
    """Whether every replacement of every shard's solution is in the tree."""
    return all(
        r["new"] in (repo / r["path"]).read_text(encoding="utf-8")
        for s in _manifest(kind)["shards"]
        for r in s.get("solution") or ()
    )


def _shard_paths(kind: str) -> list[str]:
    return [f"shards/{s['file']}" for s in _manifest(kind)["shards"]]


def _replace(repo: Path, path: str, old: str, new: str) -> str:
    file = repo / path
    text = file.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise ValueError(f"{old!r} not once in {path}")
    file.write_text(text.replace(old, new, 1), encoding="utf-8")
    return "ok"


def test_the_server_knows_the_harness_s_solo_task() -> None:
    assert SERVED_MARKER == SOLO_MARKER
    jobs = task_jobs(_task("read"))
    assert [j.path for j in jobs] == _shard_paths("read")
    assert all(j.worker == "" for j in jobs)
    assert arm_of(json.dumps({"messages": [_task("edit")]}).encode()) == "solo"
    swarm = (FIXTURES["read"] / "task.txt").read_text(encoding="utf-8")
    assert arm_of(swarm.encode()) == "swarm"
    assert [j.worker for j in task_jobs(swarm)] == [
        s["worker"] for s in _manifest("read")["shards"]
    ]


# --- prime-agent: OpenAI chat completions, its ipython tool --------------------------------


def _play_completions(script: str, kind: str, repo: Path, monkeypatch: Any) -> list[str]:
    """The cells of one solo parent, each run in ``repo`` with the ``edit`` skill (no
    ``rlm``: a cell that spawns fails)."""
    monkeypatch.chdir(repo)

    async def edit(path: str, old_str: str, new_str: str) -> str:
        return _replace(repo, path, old_str, new_str)

    namespace: dict[str, Any] = {"edit": edit}
    messages: list[dict[str, Any]] = [{"role": "user", "content": _task(kind)}]
    tools = [{"type": "function", "function": {"name": "ipython", "parameters": {}}}]
    cells = []
    for turn in range(MAX_TURNS):
        body = {"messages": messages, "tools": tools}
        action = next_action(SCRIPTS[script], Conversation.from_request(body), ORACLE)
        if isinstance(action, Text):
            return cells
        assert isinstance(action, ToolCall), action
        cells.append(action.code)
        out = io.StringIO()
        code = compile(action.code, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        with contextlib.redirect_stdout(out):
            result = eval(code, namespace)
            if asyncio.iscoroutine(result):
                asyncio.run(result)
        call = {"id": f"c{turn}", "type": "function",
                "function": {"name": "ipython", "arguments": json.dumps({"code": action.code})}}  # fmt: skip
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": out.getvalue()},
        ]
    raise AssertionError("the solo parent never ended its turn")


@pytest.mark.parametrize("script", sorted(SCRIPTS))
@pytest.mark.parametrize("kind", ["read", "edit"])
def test_prime_agent_solo_parent(script: str, kind: str, tmp_path: Path, monkeypatch: Any) -> None:
    repo = _repo(kind, tmp_path)
    cells = _play_completions(script, kind, repo, monkeypatch)
    shards = _shard_paths(kind)
    assert [c.splitlines()[0] for c in cells[: len(shards)]] == ["# scripted:read"] * len(shards)
    assert [p for c in cells[: len(shards)] for p in shards if repr(p) in c] == shards
    assert not any("rlm" in c for c in cells)
    assert (repo / "combined-index.md").read_text(encoding="utf-8") == _answers(kind)
    assert _solved(kind, repo)


# --- Claude Code and opencode: Anthropic Messages --------------------------------------------

#: Each Messages client's tools: (read, edit, write) and their inputs' keys.
MESSAGES_CLIENTS: dict[str, tuple[Callable[..., Any], dict[str, Any], dict[str, str]]] = {
    "claude-code": (
        next_claude_action,
        CLAUDE_SCRIPTS,
        {
            "read": "Read",
            "edit": "Edit",
            "write": "Write",
            "path": "file_path",
            "old": "old_string",
            "new": "new_string",
            "spawn": "Agent",
            "cwd": "Primary working directory",
        },
    ),
    "opencode": (
        next_opencode_action,
        OPENCODE_SCRIPTS,
        {
            "read": "read",
            "edit": "edit",
            "write": "write",
            "path": "filePath",
            "old": "oldString",
            "new": "newString",
            "spawn": "task",
            "cwd": "Working directory",
        },
    ),
}


def _play_messages(client: str, script: str, kind: str, repo: Path) -> list[Reply]:
    plan, scripts, tool = MESSAGES_CLIENTS[client]
    messages: list[dict[str, Any]] = [{"role": "user", "content": _task(kind)}]
    replies = []
    for turn in range(MAX_TURNS):
        body = {"model": script, "system": f"{tool['cwd']}: {repo}", "tools": [{"name": "x"}],
                "messages": messages}  # fmt: skip
        action = plan(scripts[script], MessagesConversation.from_request(body), ORACLE)
        assert isinstance(action, Reply)
        replies.append(action)
        if not action.calls:
            return replies
        uses, results = [], []
        for n, call in enumerate(action.calls):
            args = dict(call.input)
            path = Path(args.get(tool["path"], "")).relative_to(repo).as_posix()
            if call.name == tool["read"]:
                text = (repo / path).read_text(encoding="utf-8")
            elif call.name == tool["edit"]:
                text = _replace(repo, path, args[tool["old"]], args[tool["new"]])
            elif call.name == tool["write"]:
                (repo / path).write_text(args["content"], encoding="utf-8")
                text = "written"
            else:
                raise AssertionError(f"a solo parent called {call.name}")
            uses.append({"type": "tool_use", "id": f"t{turn}-{n}", "name": call.name,
                         "input": args})  # fmt: skip
            results.append({"type": "tool_result", "tool_use_id": f"t{turn}-{n}", "content": text})
        messages += [{"role": "assistant", "content": uses}, {"role": "user", "content": results}]
    raise AssertionError("the solo parent never ended its turn")


@pytest.mark.parametrize(
    ("client", "script"),
    [(c, s) for c, (_, scripts, _) in MESSAGES_CLIENTS.items() for s in sorted(scripts)],
)
@pytest.mark.parametrize("kind", ["read", "edit"])
def test_messages_solo_parent(client: str, script: str, kind: str, tmp_path: Path) -> None:
    repo = _repo(kind, tmp_path)
    replies = _play_messages(client, script, kind, repo)
    tool = MESSAGES_CLIENTS[client][2]
    shards = _shard_paths(kind)
    reads = replies[: len(shards)]
    assert [[(c.name, c.input[tool["path"]]) for c in r.calls] for r in reads] == [
        [(tool["read"], f"{repo}/{p}")] for p in shards
    ]
    assert not any(c.name == tool["spawn"] for r in replies for c in r.calls)
    assert (repo / "combined-index.md").read_text(encoding="utf-8") == _answers(kind)
    assert _solved(kind, repo)


# --- Codex: OpenAI Responses, its shell and apply_patch ---------------------------------------


def _play_codex(script: str, kind: str, repo: Path) -> list[CodexReply]:
    """Every answer of one solo Codex thread, each ``exec_command`` run by a real shell in
    ``repo``; an ``apply_patch`` answered as applied (its patch is checked, not applied)."""
    tools = [
        {"type": "function", "name": "exec_command"},
        {"type": "custom", "name": PATCH_TOOL},
        {"type": "namespace", "name": V1_NAMESPACE, "tools": []},
    ]
    user = {"type": "input_text", "text": _task(kind)}
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": [user]}]
    replies = []
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(repo.parent)}
    for turn in range(MAX_TURNS):
        conv = ResponsesConversation.from_request({"input": items, "tools": tools})
        action = next_codex_action(CODEX_SCRIPTS[script], conv, ORACLE)
        assert isinstance(action, CodexReply)
        replies.append(action)
        if not action.calls:
            return replies
        for n, call in enumerate(action.calls):
            cid = f"c{turn}-{n}"
            if call.custom:
                items += [
                    {"type": "custom_tool_call", "call_id": cid, "name": call.name,
                     "input": call.arguments["input"]},
                    {"type": "custom_tool_call_output", "call_id": cid,
                     "output": "Exit code: 0\nOutput:\nSuccess. Updated the following files"},
                ]  # fmt: skip
                continue
            assert call.name == "exec_command", f"a solo parent called {call.name}"
            done = subprocess.run(
                ["bash", "-c", str(call.arguments["cmd"])],
                cwd=repo, env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            output = f"Process exited with code {done.returncode}\nOutput:\n{done.stdout}"
            items += [
                {"type": "function_call", "call_id": cid, "name": call.name,
                 "arguments": json.dumps(dict(call.arguments))},
                {"type": "function_call_output", "call_id": cid, "output": output},
            ]  # fmt: skip
    raise AssertionError("the solo parent never ended its turn")


@pytest.mark.parametrize("script", sorted(CODEX_SCRIPTS))
@pytest.mark.parametrize("kind", ["read", "edit"])
def test_codex_solo_parent(script: str, kind: str, tmp_path: Path) -> None:
    repo = _repo(kind, tmp_path)
    replies = _play_codex(script, kind, repo)
    shards = _shard_paths(kind)
    assert [[str(c.arguments.get("cmd")) for c in r.calls] for r in replies[: len(shards)]] == [
        [f"cat {p}"] for p in shards
    ]
    assert not any(c.namespace for r in replies for c in r.calls)  # no multi-agent tool
    assert (repo / "combined-index.md").read_text(encoding="utf-8") == _answers(kind)
    patches = [str(c.arguments["input"]) for r in replies for c in r.calls if c.custom]
    if kind == "edit":
        (patch,) = patches  # every change in one patch, as no-spawn's parent makes them
        new_lines = [
            line
            for s in _manifest(kind)["shards"]
            for r in s["solution"]
            for line in r["new"].splitlines()
        ]
        assert all(f"+{line}" in patch.splitlines() for line in new_lines)
    else:
        assert patches == []


# --- the bill: an item's and its twin's, one model ------------------------------------------


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(ORACLE) as srv:
        yield srv


def _complete(srv: ScriptedModelServer, task: str) -> None:
    body = {"model": "honest", "stream": False, "tools": [{"type": "function"}],
            "messages": [{"role": "user", "content": task}]}  # fmt: skip
    request = urllib.request.Request(
        srv.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200


def test_a_twin_is_billed_apart_from_its_item(server: ScriptedModelServer) -> None:
    swarm = (FIXTURES["read"] / "task.txt").read_text(encoding="utf-8")
    _complete(server, swarm)
    _complete(server, _task("read"))
    _complete(server, _task("read"))
    solo, item = server.billed("honest", arm="solo"), server.billed("honest", arm="swarm")
    assert (solo.requests, item.requests) == (2, 1)
    assert solo + item == server.billed("honest") and solo.total > 0 and item.total > 0
    assert server.requests_served("honest", "tiny", arm="solo") == 2
    assert server.requests_served("honest", "tiny", arm="swarm") == 1

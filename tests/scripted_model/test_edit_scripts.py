"""The prime-agent scripts on an edit fixture, at the conversation level (no client): the
replies :func:`scripted_model.scripts.next_action` gives, and what their cells do when run
the way prime-agent 0.8.0 runs them (one kernel per session, top-level ``await``, the
``edit`` skill reading the file, replacing one occurrence and writing it back,
``rlm(...)``/``agent_message.send(...)`` for spawns and replies).

Only a real prime-agent plays them end to end (``tests/harness/agents/test_selftest_real.py``,
skipped without ``PRIME_AGENT_BIN``); here a small stand-in of its kernel runs the cells,
so a script whose cells would not run, or would change the wrong files, fails."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from scripted_model.conversation import Conversation
from scripted_model.oracle import Oracle
from scripted_model.scripts import SCRIPTS, Text, ToolCall, next_action

#: A three-shard edit fixture in the documented format (issue 39's design, section 1), each
#: shard owning one module and adding its own line to the shared CHANGELOG.md.
SHARDS = (("alpha", 37), ("beta", 41), ("gamma", 43))
SHIPPED = {f"pkg/{n}.py": f'"""Shard {n}."""\n\nRATE = 0\n' for n, _ in SHARDS} | {
    "CHANGELOG.md": "# Changes\n\n" + "".join(f"<!-- {n} -->\n" for n, _ in SHARDS)
}
MANIFEST: dict[str, Any] = {
    "name": "edit-mini",
    "artifact": "combined-index.md",
    "kind": "edit",
    "shared": ["CHANGELOG.md"],
    "shards": [
        {
            "file": f"{n}.md",
            "worker": f"worker-{n}",
            "question": f"Carry out the ticket; what is pkg.{n}.RATE after it?",
            "expected": rate,
            "owns": [f"pkg/{n}.py"],
            "checks": [f"checks/test_{n}.py"],
            "solution": [
                {"path": f"pkg/{n}.py", "old": "RATE = 0", "new": f"RATE = {rate}"},
                {"path": "CHANGELOG.md", "old": f"<!-- {n} -->", "new": f"- {n}: rate {rate}"},
            ],
        }
        for n, rate in SHARDS
    ],
}
TASK = "Carry out every ticket by delegating.\n\n" + "".join(
    f"- shards/{s['file']}: {s['question']} (worker: {s['worker']})\n" for s in MANIFEST["shards"]
)
SOLVED = {f"pkg/{n}.py": f'"""Shard {n}."""\n\nRATE = {rate}\n' for n, rate in SHARDS} | {
    "CHANGELOG.md": "# Changes\n\n" + "".join(f"- {n}: rate {r}\n" for n, r in SHARDS)
}
WORKERS = [f"worker-{n}" for n, _ in SHARDS]
TOOLS = [{"type": "function", "function": {"name": "ipython", "parameters": {}}}]
#: The most model requests one session of these scripts makes (a runaway guard).
MAX_TURNS = 12


@dataclass
class Kernel:
    """What one session's cells reach: the repo (the cwd), the edit skill, ``rlm`` and
    ``agent_message``; every successful edit logged as (thread, path, old, new)."""

    run: Run
    thread: str
    namespace: dict[str, Any] = field(default_factory=dict)

    async def edit(self, path: str, old_str: str, new_str: str) -> str:
        # As the skill does (real-runs/child-edits README): exactly one occurrence, else a
        # ValueError; read, replace, write back.
        file = Path(path)
        text = file.read_text()
        found = text.count(old_str)
        if found != 1:
            raise ValueError(f"string not found in {path}" if not found else f"found {found}")
        file.write_text(text.replace(old_str, new_str, 1))
        self.run.edits.append((self.thread, path, old_str, new_str))
        return f"Edited {file.resolve()}"

    def execute(self, code: str) -> str:
        rlm = self.run.spawner()
        self.namespace |= {"edit": self.edit, "rlm": rlm, "agent_message": self.run.mailbox(self)}
        out = io.StringIO()
        compiled = compile(code, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        with contextlib.redirect_stdout(out):
            result = eval(compiled, self.namespace)
            if asyncio.iscoroutine(result):
                # Its own loop, in its own thread: a parent's cell that spawns runs the
                # children's sessions (and their cells) while its own loop is running.
                with ThreadPoolExecutor(1) as kernel:
                    kernel.submit(asyncio.run, result).result()
        return out.getvalue()


@dataclass
class Run:
    """One scripted run: the parent's session, and each child's run to its end when spawned
    (one at a time); a child's reply reaches the parent after the parent's next tool call."""

    script: str
    oracle: Oracle
    edits: list[tuple[str, str, str, str]] = field(default_factory=list)
    spawned: list[str] = field(default_factory=list)
    inbox: list[str] = field(default_factory=list)

    def spawner(self) -> Rlm:
        return Rlm(self)

    def mailbox(self, kernel: Kernel) -> Any:
        async def send(message: str, receiver_role: str) -> dict[str, str]:
            assert receiver_role == "parent"
            self.inbox.append(f"[from child:{kernel.thread}]\nAgent-to-agent message.\n\n{message}")
            return {"deliveryStatus": "queued"}

        return SimpleNamespace(send=send)

    def session(self, thread: str, task: str) -> list[dict[str, Any]]:
        """Play one session to its end; its messages."""
        kernel = Kernel(self, thread)
        messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
        for turn in range(MAX_TURNS):
            body = {"messages": messages, "tools": TOOLS}
            action = next_action(SCRIPTS[self.script], Conversation.from_request(body), self.oracle)
            if isinstance(action, Text):
                return messages
            assert isinstance(action, ToolCall), action
            call = {"id": f"{thread}-{turn}", "type": "function", "function": {
                "name": "ipython", "arguments": json.dumps({"code": action.code})}}  # fmt: skip
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            output = kernel.execute(action.code)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
            if thread == "parent":
                messages += [{"role": "user", "content": reply} for reply in self.inbox]
                self.inbox.clear()
        raise AssertionError(f"{thread} did not finish in {MAX_TURNS} turns")


class Rlm:
    """``rlm`` as a parent's kernel has it: ``await rlm(prompt, name=...)`` spawns (here:
    plays the child to its end), ``await rlm.list_subagents()`` lists the children."""

    def __init__(self, run: Run) -> None:
        self.run = run

    async def __call__(self, prompt: str, name: str) -> str:
        self.run.spawned.append(name)
        self.run.session(name, f"[task from parent]\n\n{prompt}")
        return f"RLMSpawnHandle(name={name!r})"

    async def list_subagents(self) -> list[SimpleNamespace]:
        return [SimpleNamespace(session_name=n, status="completed") for n in self.run.spawned]


def play(script: str, repo: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    for path, text in SHIPPED.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    monkeypatch.chdir(repo)
    run = Run(script, Oracle.from_manifests([MANIFEST]))
    run.session("parent", TASK)
    return run


def tree(repo: Path) -> dict[str, str]:
    return {path: (repo / path).read_text() for path in SHIPPED}


def artifact(repo: Path) -> str:
    return (repo / "combined-index.md").read_text()


ANSWERS = "".join(f"- {n}.md: {rate}\n" for n, rate in SHARDS)


def writers(run: Run) -> dict[str, set[str]]:
    """Each file changed -> the threads that edited it."""
    found: dict[str, set[str]] = {}
    for thread, path, _, _ in run.edits:
        found.setdefault(path, set()).add(thread)
    return found


def test_honest_children_make_their_own_changes_with_the_edit_skill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = play("honest", tmp_path, monkeypatch)
    assert tree(tmp_path) == SOLVED and artifact(tmp_path) == ANSWERS
    assert writers(run) == {
        "pkg/alpha.py": {"worker-alpha"},
        "pkg/beta.py": {"worker-beta"},
        "pkg/gamma.py": {"worker-gamma"},
        "CHANGELOG.md": {"worker-alpha", "worker-beta", "worker-gamma"},
    }


def test_edit_parent_children_only_answer_and_the_parent_makes_every_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = play("edit-parent", tmp_path, monkeypatch)
    assert run.spawned == WORKERS
    assert tree(tmp_path) == SOLVED and artifact(tmp_path) == ANSWERS
    assert {path: threads for path, threads in writers(run).items()} == {
        path: {"parent"} for path in SHIPPED
    }


def test_edit_wrong_lane_the_first_child_also_changes_the_next_shards_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = play("edit-wrong-lane", tmp_path, monkeypatch)
    assert tree(tmp_path) == SOLVED and artifact(tmp_path) == ANSWERS
    # Children run one at a time here, alpha first: beta's own edit then finds its change
    # made (refused, and printed); the other order is the next test.
    assert writers(run)["pkg/beta.py"] == {"worker-alpha"}
    # The shared file is not another shard's: only the owned module is trespassed on.
    assert [e for e in run.edits if e[0] == "worker-alpha" and "beta" in e[2] + e[3]] == []
    assert writers(run)["pkg/gamma.py"] == {"worker-gamma"}


def test_a_trespass_after_the_owner_rewrites_the_same_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whichever child gets to the file first, the trespasser's edit is on record and the
    file ends as the owner's solution makes it."""
    play("honest", tmp_path, monkeypatch)  # every owner already made its change
    run = Run("edit-wrong-lane", Oracle.from_manifests([MANIFEST]))
    run.session("worker-alpha", "[task from parent]\n\nSHARD=shards/alpha.md INDEX=0 ATTEMPT=1")
    assert ("worker-alpha", "pkg/beta.py", "RATE = 41", "RATE = 41") in run.edits
    assert tree(tmp_path) == SOLVED


def test_no_spawn_the_parent_makes_every_change_then_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = play("no-spawn", tmp_path, monkeypatch)
    assert run.spawned == [] and tree(tmp_path) == SOLVED and artifact(tmp_path) == ANSWERS
    assert set().union(*writers(run).values()) == {"parent"}


@pytest.mark.parametrize(
    ("script", "spawned", "unchanged"),
    [
        pytest.param("helper-names", ["helper-1", "helper-2", "helper-3"], [], id="helper-names"),
        # The silent child ends without a change or an answer.
        pytest.param("silent-child", WORKERS, ["pkg/alpha.py"], id="silent-child"),
        # The wrong answer is only in the reply: the change is right.
        pytest.param("wrong-answer", WORKERS, [], id="wrong-answer"),
    ],
)
def test_the_read_scripts_keep_their_meaning_on_an_edit_fixture(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    script: str,
    spawned: list[str],
    unchanged: list[str],
) -> None:
    run = play(script, tmp_path, monkeypatch)
    assert run.spawned == spawned
    assert [p for p in SHIPPED if (tmp_path / p).read_text() == SHIPPED[p]] == unchanged
    silent = {"worker-alpha"} if unchanged else set()
    assert set().union(*writers(run).values()) == set(spawned) - silent


def test_an_edit_cell_is_what_the_real_client_runs() -> None:
    """One ``await edit(path=..., old_str=..., new_str=...)`` per replacement, as the real
    edit-honest run called the skill; the child's second turn replies, its third ends."""
    oracle = Oracle.from_manifests([MANIFEST])
    task = "[task from parent]\n\nRead it.\nSHARD=shards/beta.md INDEX=1 ATTEMPT=1"
    body: dict[str, Any] = {"messages": [{"role": "user", "content": task}], "tools": TOOLS}
    first = next_action(SCRIPTS["honest"], Conversation.from_request(body), oracle)
    assert isinstance(first, ToolCall) and first.code.startswith("# scripted:edit\n")
    assert "await edit(path=path, old_str=old, new_str=new)" in first.code
    assert re.findall(r"^await change\((.*)\)$", first.code, re.MULTILINE) == [
        "'pkg/beta.py', 'RATE = 0', 'RATE = 41'",
        "'CHANGELOG.md', '<!-- beta -->', '- beta: rate 41'",
    ]
    call = {"id": "c", "type": "function", "function": {
        "name": "ipython", "arguments": json.dumps({"code": first.code})}}  # fmt: skip
    body["messages"] += [
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "Edited ..."},
    ]
    second = next_action(SCRIPTS["honest"], Conversation.from_request(body), oracle)
    assert isinstance(second, ToolCall) and "agent_message.send('beta.md: 41'" in second.code


def test_on_a_read_fixture_children_reply_at_once() -> None:
    oracle = Oracle.from_manifests([{**MANIFEST, "kind": "read"}])
    assert oracle.solution("alpha.md") is None
    task = "[task from parent]\n\nSHARD=shards/alpha.md INDEX=0 ATTEMPT=1"
    body = {"messages": [{"role": "user", "content": task}], "tools": TOOLS}
    for script in ("honest", "edit-wrong-lane"):
        action = next_action(SCRIPTS[script], Conversation.from_request(body), oracle)
        assert isinstance(action, ToolCall) and action.code.startswith("# scripted:reply")

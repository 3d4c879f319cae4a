"""Read a Gemini API request (what Gemini CLI sends): who is talking, what came back.

Stateless like the other conversations: a request's ``contents`` are the whole thread, user
and ``model`` turns whose ``parts`` hold text, ``functionCall`` (the model's tool calls) and
``functionResponse`` (their results, in the next user turn). Gemini CLI 0.61.0 opens a
parent's thread with its own ``<session_context>`` user turn (the workspace directories, a
directory tree): that is not the task, and is where the working directory is read.

Who is talking is told by the tools the request declares: a subagent's offer
``complete_task`` (the only way it can finish), a parent's ``invoke_agent``; a request that
declares neither (a router, an edit fixer, a loop check) is the client's own. A subagent's
first user turn is the ``invoke_agent`` prompt verbatim: its first line ``Worker: <name>``,
then its task, then the scripted parent's job line (``SHARD=... INDEX=... ATTEMPT=...``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scripted_model.conversation import CHILD_JOB_RE, ShardJob, task_jobs
from scripted_model.oracle import Oracle, shard_key

#: The client's own first user turn in a parent's thread.
SESSION_CONTEXT = "<session_context>"
#: The working directory, as the session context (parent) or the environment block of a
#: subagent's system prompt lists it: the first of the workspace directories.
CWD_RE = re.compile(r"Workspace Directories:\*\*\s*\n\s*-\s*(?P<cwd>\S[^\n]*)")
#: A shard a child's task names when it carries no job line (a prompt not written by the
#: scripted parent): ``Read the file shards/<path>`` or ``Read the ticket shards/<path>``.
TASK_SHARD_RE = re.compile(r"Read the (?:file|ticket) (?P<path>shards/\S+?)[.,;:]?(?:\s|$)")
#: The tools whose declaration tells a subagent's request and a parent's apart.
CHILD_TOOL = "complete_task"
PARENT_TOOL = "invoke_agent"


@dataclass(frozen=True)
class Job:
    """A child's job: its shard, its index in the parent's list, which attempt it is."""

    path: str
    index: int
    attempt: int


@dataclass(frozen=True)
class FunctionCall:
    name: str
    args: Mapping[str, Any]
    call_id: str


@dataclass(frozen=True)
class FunctionResult:
    name: str
    call_id: str
    output: str


@dataclass(frozen=True)
class GeminiConversation:
    #: The user turns' texts in order, the client's session context left out.
    user_texts: tuple[str, ...]
    #: The model's function calls in order, and what came back for them.
    calls: tuple[FunctionCall, ...]
    results: tuple[FunctionResult, ...]
    #: The model turns' texts (one per turn that said something).
    model_texts: tuple[str, ...]
    tool_names: frozenset[str]
    cwd: str | None
    #: Whether the request asks for a JSON answer (``responseMimeType``): the client's own
    #: utility calls (router, edit fixer) parse what they get.
    wants_json: bool

    @classmethod
    def from_request(cls, body: Mapping[str, Any]) -> GeminiConversation:
        users: list[str] = []
        calls: list[FunctionCall] = []
        results: list[FunctionResult] = []
        model_texts: list[str] = []
        cwd = None
        for turn in body.get("contents") or []:
            if not isinstance(turn, dict):
                continue
            parts = [p for p in turn.get("parts") or [] if isinstance(p, dict)]
            texts = [str(p["text"]) for p in parts if isinstance(p.get("text"), str)]
            if turn.get("role") == "model":
                text = "".join(
                    str(p["text"])
                    for p in parts
                    if isinstance(p.get("text"), str) and not p.get("thought")
                )
                if text:
                    model_texts.append(text)
                for p in parts:
                    call = p.get("functionCall")
                    if isinstance(call, dict):
                        args = call.get("args")
                        calls.append(
                            FunctionCall(
                                str(call.get("name", "")),
                                args if isinstance(args, dict) else {},
                                str(call.get("id", "")),
                            )
                        )
                continue
            for p in parts:
                done = p.get("functionResponse")
                if isinstance(done, dict):
                    results.append(
                        FunctionResult(
                            str(done.get("name", "")),
                            str(done.get("id", "")),
                            _output(done.get("response")),
                        )
                    )
            # The client's session context is a part of its own, before the task's.
            for context in (t for t in texts if t.lstrip().startswith(SESSION_CONTEXT)):
                found = CWD_RE.search(context)
                cwd = found["cwd"].strip() if found and cwd is None else cwd
            text = "".join(t for t in texts if not t.lstrip().startswith(SESSION_CONTEXT))
            if text:
                users.append(text)
        if cwd is None:
            found = CWD_RE.search(_system_text(body))
            cwd = found["cwd"].strip() if found else None
        names = frozenset(
            str(f.get("name"))
            for tool in body.get("tools") or []
            if isinstance(tool, dict)
            for f in tool.get("functionDeclarations") or []
            if isinstance(f, dict)
        )
        config = body.get("generationConfig")
        mime = config.get("responseMimeType") if isinstance(config, dict) else None
        return cls(
            tuple(users),
            tuple(calls),
            tuple(results),
            tuple(model_texts),
            names,
            cwd,
            mime == "application/json",
        )

    @property
    def caller(self) -> str:
        """``child``, ``parent`` or ``internal`` (a request of the client's own)."""
        if CHILD_TOOL in self.tool_names:
            return "child"
        if PARENT_TOOL in self.tool_names:
            return "parent"
        return "internal"

    @property
    def first_user_text(self) -> str:
        return self.user_texts[0] if self.user_texts else ""

    def child_job(self, oracle: Oracle) -> Job | None:
        """A child's job: from the scripted parent's job line, else from the shard its task
        names (its index then its place in its fixture's manifest, its attempt the first)."""
        if self.caller != "child":
            return None
        task = self.first_user_text
        found = None
        for match in CHILD_JOB_RE.finditer(task):
            found = match
        if found is not None:
            return Job(found["path"], int(found["index"]), int(found["attempt"]))
        named = TASK_SHARD_RE.search(task)
        if named is None:
            return None
        path = named["path"]
        fixture = oracle.fixture_of(path)
        siblings = [f for f, of in oracle.fixtures.items() if of == fixture]
        key = shard_key(path)
        return Job(path, siblings.index(key) if key in siblings else -1, 1)

    def shard_jobs(self) -> list[ShardJob]:
        return task_jobs(self.first_user_text) if self.caller == "parent" else []

    def shard_files(self, oracle: Oracle) -> list[str]:
        job = self.child_job(oracle)
        if job is not None:
            return [job.path]
        return [j.path for j in self.shard_jobs()]

    def calls_of(self, name: str) -> list[FunctionCall]:
        return [c for c in self.calls if c.name == name]

    def result_of(self, call: FunctionCall, nth: int | None = None) -> str | None:
        """What came back for ``call``: by its id, else (calls without ids: a subagent's)
        the ``nth`` result of that tool's name, in order."""
        if call.call_id:
            for r in self.results:
                if r.call_id == call.call_id:
                    return r.output
        if nth is not None:
            same = [r for r in self.results if r.name == call.name]
            if nth < len(same):
                return same[nth].output
        return None

    def outputs_of(self, name: str) -> list[str | None]:
        """What came back for each call of tool ``name``, in call order (None: nothing yet)."""
        return [self.result_of(c, n) for n, c in enumerate(self.calls_of(name))]


def _output(response: Any) -> str:
    """A function response's text: its ``output`` (or ``error``), else the whole object."""
    if isinstance(response, dict):
        for key in ("output", "error", "result"):
            value = response.get(key)
            if isinstance(value, str):
                return value
        return str(response)
    return "" if response is None else str(response)


def _system_text(body: Mapping[str, Any]) -> str:
    system = body.get("systemInstruction")
    if isinstance(system, dict):
        parts = system.get("parts")
        if isinstance(parts, Sequence):
            return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    return system if isinstance(system, str) else ""


__all__ = [
    "CHILD_TOOL",
    "PARENT_TOOL",
    "FunctionCall",
    "FunctionResult",
    "GeminiConversation",
    "Job",
]

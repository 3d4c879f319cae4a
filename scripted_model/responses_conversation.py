"""Read an OpenAI Responses request (what Codex sends): who is talking, what came back.

Stateless like the other conversations: a request's ``input`` is the whole thread. A parent
is a thread whose user messages hold the task's shard lines and no child job; a child is one
whose user messages hold the ``SHARD=... INDEX=... ATTEMPT=...`` line the scripted parent
puts into every spawn message (a child spawned with its parent's history forked in carries
the parent's task too, so the job line decides). Codex's own context messages
(``<environment_context>``, skills, AGENTS.md) are not the task; the working directory is
read from ``<environment_context>``. What came back is every ``function_call_output`` and
every later user message (a finished child's ``<subagent_notification>``).

Under the second multi-agent protocol (``collaboration``), agents talk in ``agent_message``
items instead: ``Message Type: NEW_TASK`` brings a child its task (the message's parts,
one of them ``encrypted_content`` that a real server decrypts and this one reads as text),
``Message Type: FINAL_ANSWER`` brings a parent a child's final answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scripted_model.conversation import CHILD_JOB_RE, ShardJob, task_jobs

#: User messages Codex writes itself; none of them is the task.
CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "<skills_instructions>")
CWD_RE = re.compile(r"<cwd>(?P<cwd>[^<]+)</cwd>")
#: A finished child, as Codex tells its parent under the first multi-agent protocol.
NOTIFICATION_RE = re.compile(
    r"<subagent_notification>\s*(?P<body>\{.*?\})\s*</subagent_notification>", re.S
)


#: The header of an ``agent_message`` (second protocol), before its payload.
AGENT_MESSAGE_RE = re.compile(
    r"\AMessage Type: (?P<kind>[A-Z_]+)\n(?:[^\n]*\n)*?Payload:\n(?P<payload>.*)\Z", re.S
)


@dataclass(frozen=True)
class AgentMessage:
    """One ``agent_message`` item: who wrote it to whom, its type and its payload."""

    author: str
    recipient: str
    kind: str
    payload: str


@dataclass(frozen=True)
class FunctionCall:
    call_id: str
    name: str
    namespace: str | None
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class CallOutput:
    call_id: str
    text: str


@dataclass(frozen=True)
class ResponsesConversation:
    #: The user messages' texts in order, Codex's own context messages left out.
    user_texts: tuple[str, ...]
    calls: tuple[FunctionCall, ...]
    outputs: tuple[CallOutput, ...]
    agent_messages: tuple[AgentMessage, ...]
    #: Names of the tool namespaces the request offers (``multi_agent_v1``, ``collaboration``).
    namespaces: frozenset[str]
    #: Names of the top-level tools it offers (``exec_command``, ``apply_patch``, ...).
    tool_names: frozenset[str]
    has_tools: bool
    cwd: str | None

    @classmethod
    def from_request(cls, body: Mapping[str, Any]) -> ResponsesConversation:
        users: list[str] = []
        calls: list[FunctionCall] = []
        outputs: list[CallOutput] = []
        agent_messages: list[AgentMessage] = []
        cwd = None
        for item in body.get("input") or []:
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "message" and item.get("role") == "user":
                text = _text(item.get("content"))
                if text.lstrip().startswith(CONTEXT_PREFIXES):
                    found = CWD_RE.search(text)
                    cwd = found["cwd"].strip() if found and cwd is None else cwd
                else:
                    users.append(text)
            elif kind == "function_call":
                calls.append(
                    FunctionCall(
                        str(item.get("call_id", "")),
                        str(item.get("name", "")),
                        item.get("namespace") if isinstance(item.get("namespace"), str) else None,
                        _arguments(item.get("arguments")),
                    )
                )
            elif kind == "custom_tool_call":  # a freeform tool (apply_patch): its text is the input
                calls.append(
                    FunctionCall(
                        str(item.get("call_id", "")),
                        str(item.get("name", "")),
                        None,
                        {"input": str(item.get("input") or "")},
                    )
                )
            elif kind in ("function_call_output", "custom_tool_call_output"):
                outputs.append(CallOutput(str(item.get("call_id", "")), _text(item.get("output"))))
            elif kind == "agent_message":
                found = AGENT_MESSAGE_RE.match(_parts(item.get("content")))
                if found:
                    agent_messages.append(
                        AgentMessage(
                            str(item.get("author", "")),
                            str(item.get("recipient", "")),
                            found["kind"],
                            found["payload"],
                        )
                    )
        tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
        namespaces = frozenset(str(t.get("name")) for t in tools if t.get("type") == "namespace")
        names = frozenset(str(t.get("name")) for t in tools if t.get("type") != "namespace")
        return cls(
            tuple(users),
            tuple(calls),
            tuple(outputs),
            tuple(agent_messages),
            namespaces,
            names,
            bool(tools),
            cwd,
        )

    @property
    def tasks(self) -> list[str]:
        """Every task this thread was given: its user messages and NEW_TASK payloads."""
        return list(self.user_texts) + [
            m.payload for m in self.agent_messages if m.kind == "NEW_TASK"
        ]

    @property
    def first_user_text(self) -> str:
        return self.user_texts[0] if self.user_texts else ""

    @property
    def child_job(self) -> re.Match[str] | None:
        """The child's job line (the last one its messages hold), or ``None`` for a parent."""
        found = None
        for text in self.tasks:
            for match in CHILD_JOB_RE.finditer(text):
                found = match
        return found

    @property
    def task_text(self) -> str:
        """What identifies this thread: a child's spawn message, else the parent's task."""
        job = self.child_job
        if job is not None:
            return next(t for t in reversed(self.tasks) if job.group(0) in t)
        return self.first_user_text

    def shard_jobs(self) -> list[ShardJob]:
        return task_jobs(self.first_user_text)

    def shard_files(self) -> list[str]:
        job = self.child_job
        if job is not None:
            return [job["path"]]
        return [j.path for j in self.shard_jobs()]

    def calls_of(self, name: str) -> list[FunctionCall]:
        return [c for c in self.calls if c.name == name]

    def output_of(self, call_id: str) -> str | None:
        return next((o.text for o in self.outputs if o.call_id == call_id), None)

    def notifications(self) -> list[tuple[str, Mapping[str, Any]]]:
        """(agent, status) of every finished child the thread was told of, in order: a
        ``<subagent_notification>`` (first protocol), or a FINAL_ANSWER agent message read
        as a ``completed`` status (second)."""
        found: list[tuple[str, Mapping[str, Any]]] = []
        for text in self.user_texts[1:]:
            for match in NOTIFICATION_RE.finditer(text):
                try:
                    body = json.loads(match["body"])
                except ValueError:
                    continue
                if isinstance(body, dict) and isinstance(body.get("status"), dict):
                    found.append((str(body.get("agent_path", "")), body["status"]))
        found += [
            (m.author, {"completed": m.payload})
            for m in self.agent_messages
            if m.kind == "FINAL_ANSWER"
        ]
        return found


def _arguments(raw: Any) -> Mapping[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _parts(content: Any) -> str:
    """An agent message's parts joined: its text parts and its (here plain) encrypted one."""
    if not isinstance(content, Sequence) or isinstance(content, str):
        return _text(content)
    return "".join(
        str(p.get("text") or p.get("encrypted_content") or "")
        for p in content
        if isinstance(p, dict)
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""

"""Read an Anthropic Messages request (what Claude Code sends): who is talking, what came back.

Stateless like :mod:`scripted_model.conversation`: a parent is a conversation whose first
user message holds the task's shard lines; a subagent is one whose first user message holds
the ``SHARD=... INDEX=... ATTEMPT=...`` line the scripted parent puts into every prompt.
The scripted model's earlier turns are its own ``tool_use`` blocks (``Agent``, ``Read``,
``Write``), and what came back is every ``tool_result`` and every user text (a background
subagent's result arrives as a ``<task-notification>`` text).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scripted_model.conversation import CHILD_JOB_RE, ShardJob, task_jobs

#: The line a scripted subagent ends with; the scripts read answers from it.
#: The value runs to the end of the line (or a tag): it may hold spaces.
ANSWER_RE = re.compile(r"ANSWER::(?P<file>[^\s:<]+)::(?P<value>[^\n<]*[^\s<])")
#: How a background subagent's result names the spawn it belongs to.
NOTIFICATION_ID_RE = re.compile(r"<tool-use-id>\s*(?P<id>[^<\s]+)\s*</tool-use-id>")
#: The system prompt names the working directory the Write tool's absolute path needs
#: (Claude Code: ``Primary working directory: ...``; opencode: ``Working directory: ...``).
CWD_RE = re.compile(r"(?:Primary working|Working) directory:\s*(?P<cwd>\S+)")


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    text: str
    is_error: bool


@dataclass(frozen=True)
class MessagesConversation:
    first_user_text: str
    tool_uses: tuple[ToolUse, ...]
    tool_results: tuple[ToolResult, ...]
    #: Every user or system text block after the first user message. Notifications arrive
    #: here: client 2.1.332 sends them in ``system``-role messages inside ``messages``.
    later_user_texts: tuple[str, ...]
    has_tools: bool
    cwd: str | None

    @classmethod
    def from_request(cls, body: Mapping[str, Any]) -> MessagesConversation:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        first_user = ""
        uses: list[ToolUse] = []
        results: list[ToolResult] = []
        later: list[str] = []
        seen_user = False
        for message in messages:
            blocks = _blocks(message.get("content"))
            role = message.get("role")
            if role == "assistant":
                uses += [
                    ToolUse(str(b.get("id", "")), str(b.get("name", "")), b.get("input") or {})
                    for b in blocks
                    if b.get("type") == "tool_use"
                ]
            elif role in ("user", "system"):
                texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
                results += [
                    ToolResult(
                        str(b.get("tool_use_id", "")),
                        _text(b.get("content")),
                        bool(b.get("is_error")),
                    )
                    for b in blocks
                    if b.get("type") == "tool_result"
                ]
                if seen_user:
                    later += texts
                elif role == "user":
                    first_user, seen_user = "\n".join(texts), True
        return cls(
            first_user,
            tuple(uses),
            tuple(results),
            tuple(later),
            bool(body.get("tools")),
            _cwd(body, messages),
        )

    @property
    def child_job(self) -> re.Match[str] | None:
        """The subagent's job line, or ``None`` for a parent (or an internal request)."""
        return CHILD_JOB_RE.search(self.first_user_text)

    def shard_jobs(self) -> list[ShardJob]:
        return task_jobs(self.first_user_text)

    def shard_files(self) -> list[str]:
        job = self.child_job
        if job is not None:
            return [job["path"]]
        return [j.path for j in self.shard_jobs()]

    def uses_of(self, name: str) -> list[ToolUse]:
        return [u for u in self.tool_uses if u.name == name]

    def received_texts(self) -> list[str]:
        """Everything that came back to this conversation: tool results and later user text."""
        return [r.text for r in self.tool_results] + list(self.later_user_texts)

    def answers(self) -> dict[str, str]:
        """Shard file -> answer, from every ``ANSWER::`` line received (last one wins)."""
        out: dict[str, str] = {}
        for text in self.received_texts():
            for m in ANSWER_RE.finditer(text):
                out[m["file"]] = m["value"]
        return out

    def notified_ids(self) -> set[str]:
        return {
            m["id"] for text in self.received_texts() for m in NOTIFICATION_ID_RE.finditer(text)
        }


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, Sequence):
        return [b for b in content if isinstance(b, dict)]
    return []


def _text(content: Any) -> str:
    return "\n".join(str(b.get("text", "")) for b in _blocks(content) if "text" in b)


def _cwd(body: Mapping[str, Any], messages: list[dict[str, Any]]) -> str | None:
    texts = [_text(body.get("system"))] + [_text(m.get("content")) for m in messages]
    for text in texts:
        match = CWD_RE.search(text)
        if match:
            return match["cwd"]
    return None

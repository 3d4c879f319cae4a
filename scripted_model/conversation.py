"""Read what a request's conversation says: who is talking, the task, what came back.

The scripted model is stateless, so everything it knows comes from here. Its own earlier
turns carry a marker comment (``# scripted:<step>``) in their code, which is how a later
turn knows which steps already happened.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scripted_model.oracle import shard_key

#: How the product hands a child its task (the first message of a child session).
CHILD_TASK_HEADER = "[task from parent]"
#: How the product shows a child's reply in the parent's conversation.
CHILD_REPLY_RE = re.compile(r"\[from child:(?P<name>[^\]\s]+)\]")
#: One shard line of a fixture's task.txt: ``- shards/<file>: <question> (worker: <name>)``.
SHARD_LINE_RE = re.compile(
    r"^\s*[-*]\s+(?P<path>\S+?):\s.*\(worker:\s*(?P<worker>[^)\s]+)\)\s*$", re.MULTILINE
)
#: What marks a solo twin's task (``run --solo``; the harness's
#: ``harness.fixtures.task_text.SOLO_MARKER``, which a test keeps equal): one agent, asked
#: to work alone, whatever the model id.
SOLO_MARKER = "Work alone: do not start, spawn or delegate to any subagent"
#: The solo task's shard list: ``Shards and questions:``, then ``- shards/<file>: <question>``
#: lines (no worker: there is no one to delegate to) up to a blank line.
SOLO_SHARDS_RE = re.compile(r"^Shards and questions:\n(?P<lines>(?:[ \t]*[-*][ \t]+.*\n?)+)", re.M)
SOLO_LINE_RE = re.compile(r"^\s*[-*]\s+(?P<path>\S+?):\s", re.MULTILINE)
#: The machine-readable line a scripted parent puts into every child's task.
CHILD_JOB_RE = re.compile(r"SHARD=(?P<path>\S+) INDEX=(?P<index>\d+) ATTEMPT=(?P<attempt>\d+)")
#: A reply the scripted children send: ``<file>: <answer>``.
#: The value runs to the end of the line (a heading may hold spaces: ``Budget Tracking``).
REPLY_RE = re.compile(r"^(?P<file>[^\s:]+):[ \t]*(?P<value>[^\n]*?\S)[ \t]*$", re.MULTILINE)
STEP_RE = re.compile(r"# scripted:(?P<step>[a-z-]+)")


@dataclass(frozen=True)
class ShardJob:
    path: str  # as the task names it, e.g. shards/events-01.jsonl
    worker: str

    @property
    def file(self) -> str:
        return shard_key(self.path)


def is_solo(task: str) -> bool:
    """Whether ``task`` (a root task, or a whole request's text) is a solo twin's."""
    return SOLO_MARKER in task


#: Which twin a request is of: the swarm item's, or its solo twin's.
Arm = Literal["swarm", "solo"]


def arm_of(request: bytes) -> Arm:
    """The twin a request is of, from its whole body: a solo twin's requests carry its task
    (its parent's every turn, and the client's own calls about it: a title, a summary, a
    review); the swarm's never do. The same model plays both, so this keeps their bills
    apart."""
    return "solo" if SOLO_MARKER.encode() in request else "swarm"


def task_jobs(task: str) -> list[ShardJob]:
    """The shards a root task names: a swarm task's with their workers, a solo task's
    without (``worker`` empty)."""
    if is_solo(task):
        block = SOLO_SHARDS_RE.search(task)
        lines = block["lines"] if block else ""
        return [ShardJob(m["path"], "") for m in SOLO_LINE_RE.finditer(lines)]
    return [ShardJob(m["path"], m["worker"]) for m in SHARD_LINE_RE.finditer(task)]


@dataclass(frozen=True)
class Event:
    """One conversation message reduced to what the scripts need."""

    role: str  # system, user, assistant, tool
    text: str
    step: str | None = None  # for assistant turns the scripted model made: its marker


@dataclass(frozen=True)
class Conversation:
    events: tuple[Event, ...]
    has_tools: bool

    @classmethod
    def from_request(cls, body: Mapping[str, Any]) -> Conversation:
        events = tuple(_event(m) for m in body.get("messages") or [] if isinstance(m, dict))
        return cls(events, bool(body.get("tools")))

    def user_texts(self) -> list[str]:
        return [e.text for e in self.events if e.role == "user"]

    @property
    def child_task(self) -> str | None:
        for text in self.user_texts():
            if CHILD_TASK_HEADER in text:
                return text.split(CHILD_TASK_HEADER, 1)[1].strip()
        return None

    @property
    def root_task(self) -> str | None:
        texts = self.user_texts()
        return texts[0] if texts else None

    def shard_jobs(self) -> list[ShardJob]:
        return task_jobs(self.root_task or "")

    def shard_files(self) -> list[str]:
        """The shard files this conversation is about: the root task's, or a child's one."""
        task = self.child_task
        if task is not None:
            job = CHILD_JOB_RE.search(task)
            return [job["path"]] if job else []
        return [j.path for j in self.shard_jobs()]

    def steps(self) -> list[str]:
        """The markers of the scripted model's own earlier turns, in order."""
        return [e.step for e in self.events if e.role == "assistant" and e.step]

    @property
    def assistant_turns(self) -> int:
        return sum(1 for e in self.events if e.role == "assistant")

    def replies(self) -> list[tuple[str, str]]:
        """(child name, message) of every child reply received, in order."""
        found = []
        for text in self.user_texts():
            match = CHILD_REPLY_RE.search(text)
            if match:
                # The message body follows the product's header block, after a blank line.
                body = text.rsplit("\n\n", 1)[-1].strip()
                found.append((match["name"], body))
        return found

    def answers(self) -> dict[str, str]:
        """Shard file -> answer, from the children's replies (last one wins)."""
        out: dict[str, str] = {}
        for _, body in self.replies():
            for m in REPLY_RE.finditer(body):
                out[m["file"]] = m["value"]
        return out

    def polls_since_last_reply(self, marker: str) -> int:
        """Tool results holding ``marker`` after the last child reply arrived."""
        count = 0
        for e in self.events:
            if e.role == "user" and CHILD_REPLY_RE.search(e.text):
                count = 0
            elif e.role == "tool" and marker in e.text:
                count += 1
        return count

    def last_tool_text(self) -> str:
        for e in reversed(self.events):
            if e.role == "tool":
                return e.text
        return ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


def _event(message: Mapping[str, Any]) -> Event:
    role = str(message.get("role", ""))
    text = _text(message.get("content"))
    step = None
    if role == "assistant":
        for call in message.get("tool_calls") or []:
            args = (call.get("function") or {}).get("arguments") or ""
            try:
                code = json.loads(args).get("code", "") if args else ""
            except (ValueError, AttributeError):
                code = str(args)
            match = STEP_RE.search(str(code))
            if match:
                step = match["step"]
    return Event(role, text, step)

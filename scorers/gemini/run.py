"""One Gemini CLI run's files, parsed and placed: the parent's chat record, its subagents'
records (``<parent session id>/<agent id>.jsonl``), stdout and the answers.

The parent is the chat record of kind ``main`` at the top of ``chats/``: the one the
stream's ``init`` names when there are several, else the earliest. Its subagents are the
records in the folder named by its session id, each known by its file's stem (the
``agentId`` the parent's ``invoke_agent`` call names; the record itself holds no agent
name). Top-level records with no metadata line are damaged (``broken``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from scorers.artifact import parse_artifact
from scorers.faults import ProviderFault
from scorers.gemini.chat import MAIN, Chat, Message, ToolCall, parse_chat
from scorers.gemini.invoke import INVOKE_TOOL
from scorers.gemini.log import parse_log
from scorers.gemini.stream import StdoutParse, parse_stdout
from scorers.gemini.tally import usage_by_model
from scorers.gemini.types import GeminiInputs
from scorers.records import ArtifactParse, TokenUsage
from scorers.types import read_opened


@dataclass(frozen=True, slots=True)
class Invocation:
    """One ``invoke_agent`` call of the parent: the message that made it and the call."""

    message: Message
    call: ToolCall


@dataclass(frozen=True)
class GeminiRun:
    """One run's files, parsed: the parent's record (``parent_rel`` its path below
    ``chats/``), its subagents' records by agent id, the top-level records that were
    not readable as any session (``broken``: their unreadable lines), stdout, the answers."""

    parent: Chat | None
    parent_rel: str | None
    children: Mapping[str, Chat]
    stdout: StdoutParse | None
    answers: ArtifactParse | None
    workers: tuple[str, ...] = ()
    model: str = ""
    broken: int = 0
    chats: Mapping[str, Chat] = field(default_factory=dict)
    #: The attempts the client's log says it retried (no thread named).
    retried: tuple[ProviderFault, ...] = ()

    @property
    def session_id(self) -> str | None:
        return self.parent.session_id if self.parent is not None else None

    def invocations(self) -> tuple[Invocation, ...]:
        """Every ``invoke_agent`` call of the parent, in record order."""
        if self.parent is None:
            return ()
        return tuple(
            Invocation(m, c) for m in self.parent.messages for c in m.calls if c.name == INVOKE_TOOL
        )

    def by_model(self) -> tuple[tuple[str, TokenUsage], ...]:
        """The run's tokens (parent and subagents) per model its messages name."""
        threads = [self.parent] if self.parent is not None else []
        return usage_by_model([*threads, *self.children.values()])

    def other_models(self) -> tuple[str, ...]:
        """Models that answered requests of this run other than the one it asked for (none
        when the inputs do not say which it asked for)."""
        return tuple(m for m, _u in self.by_model() if self.model and m != self.model)


def _parent(chats: Mapping[str, Chat], hint: str | None) -> tuple[str, Chat] | None:
    mains = [(rel, c) for rel, c in chats.items() if "/" not in rel and c.kind == MAIN]
    mains = [(rel, c) for rel, c in mains if c.session_id]
    named = [(rel, c) for rel, c in mains if c.session_id == hint]
    ordered = named or sorted(mains, key=lambda rc: (rc[1].started_at or "", rc[0]))
    return ordered[0] if ordered else None


def read_run(inputs: GeminiInputs) -> GeminiRun:
    """Parse every file of one run (missing ones stay ``None``)."""
    stdout = read_opened(inputs.stdout, parse_stdout)
    retried = read_opened(inputs.log, parse_log) or ()
    answers = read_opened(inputs.artifact, parse_artifact)
    chats: dict[str, Chat] = {}
    for rel, opener in inputs.chats:
        chat = read_opened(opener, parse_chat)
        if chat is not None:
            chats["/".join(p for p in rel.replace("\\", "/").split("/") if p)] = chat
    found = _parent(chats, stdout.session_id if stdout is not None else None)
    broken = sum(c.malformed for rel, c in chats.items() if "/" not in rel and not c.meta)
    if found is None:
        return GeminiRun(
            None, None, {}, stdout, answers, inputs.workers, inputs.model, broken, chats, retried
        )
    rel, parent = found
    sid = str(parent.session_id)
    children = {
        r.split("/")[1].removesuffix(".jsonl"): c
        for r, c in sorted(chats.items())
        if r.count("/") == 1 and r.split("/")[0] == sid and r.endswith(".jsonl")
    }
    return GeminiRun(
        parent, rel, children, stdout, answers, inputs.workers, inputs.model, broken, chats, retried
    )


def spawn_calls(invocations: Sequence[Invocation]) -> dict[str, str]:
    """Agent id -> the id of the call that started it (its first call)."""
    found: dict[str, str] = {}
    for inv in invocations:
        if inv.call.agent_id is not None:
            found.setdefault(inv.call.agent_id, inv.call.call_id)
    return found


__all__ = ["GeminiRun", "Invocation", "read_run", "spawn_calls"]

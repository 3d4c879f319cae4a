"""What an agent's trajectory builder hands the one ATIF writer: the swarm's threads as
agent-neutral turns (``harness/agents/<agent>/trajectory.py`` reads each agent's own
transcripts into these; :mod:`harness.export.atif` writes them, whatever the agent).

A builder only reports what the agent's records show: the turns of the parent and of each
child in order, and which of the parent's tool calls spawned which child. The swarm's
structure as the rubric sees it (spawns, names, replies, notices, the answer) comes from
the scorer's own evidence, so the export says what the verdict was made of.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from scorers.tokens import TokenUsage

Source = Literal["system", "user", "agent"]


@dataclass(frozen=True)
class Call:
    """One tool call of an agent turn. ``arguments`` is a JSON object (a call whose input
    was not one is given as ``{"input": <it>}``)."""

    call_id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class Result:
    """What a tool call returned (``call_id`` names it; None: not a tool's result).
    ``details``: the structured record the agent keeps beside the text where that record
    holds what the text does not (prime-agent's edit skill: ``{"diffs": [...]}``, each
    file change the call made), else None."""

    call_id: str | None
    content: str
    details: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Turn:
    """One step of a thread: the task or a message given to the agent (``user``), a
    runtime event (``system``), or one model response with its tool calls and the results
    they got (``agent``). ``usage`` is the response's tokens as the agent recorded them
    (None: not recorded); ``error`` says the model call failed (the provider's message)."""

    source: Source
    text: str = ""
    at: str | None = None
    model: str | None = None
    reasoning: str | None = None
    calls: tuple[Call, ...] = ()
    results: tuple[Result, ...] = ()
    usage: TokenUsage | None = None
    error: str | None = None


@dataclass(frozen=True)
class Thread:
    """One agent's turns in order. ``thread_id``: the parent's session id, or for a child
    the child id the scorer's evidence gives it (``ChildSession.child_id``, the spawn's
    ``child_id``); ``label``: the agent's own name for it, if any (a nickname)."""

    thread_id: str
    turns: tuple[Turn, ...]
    label: str | None = None


@dataclass(frozen=True)
class Swarm:
    """A run's threads: the parent, its children (any order), and which of the parent's
    calls spawned each child (child id -> call id; a child missing here is linked by
    time to the parent's last call before its spawn)."""

    parent: Thread
    children: tuple[Thread, ...] = ()
    spawned_by: Mapping[str, str] = field(default_factory=dict)
    #: The agent's version where its records say it (the CLI's, not the harness's).
    agent_version: str | None = None


@dataclass
class TurnDraft:
    """An agent turn a builder is still reading: one model response's text, reasoning and
    calls as its records come, then its calls' results (which arrive later)."""

    at: str | None
    model: str | None
    usage: TokenUsage | None = None
    error: str | None = None
    texts: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)

    def turn(self) -> Turn:
        return Turn(
            "agent",
            "\n".join(self.texts),
            self.at,
            self.model,
            "\n".join(self.reasoning) or None,
            tuple(self.calls),
            tuple(self.results),
            self.usage,
            self.error,
        )


class TurnLog:
    """A thread's turns as a builder reads them, in order (finished turns and drafts): a
    call is owned by the draft that made it, and its result, however much later it comes,
    joins that turn; a result of no call seen is a ``system`` turn of its own."""

    def __init__(self) -> None:
        self.turns: list[Turn | TurnDraft] = []
        self._owner: dict[str, TurnDraft] = {}  # call id -> the turn that made the call

    def add(self, turn: Turn | TurnDraft) -> None:
        self.turns.append(turn)

    def call(self, draft: TurnDraft, call: Call) -> None:
        draft.calls.append(call)
        self._owner.setdefault(call.call_id, draft)

    def result(
        self,
        call_id: str | None,
        content: str,
        at: str | None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        result = Result(call_id, content, details)
        owner = self._owner.get(call_id) if call_id is not None else None
        if owner is not None:
            owner.results.append(result)
        else:
            self.turns.append(Turn("system", "", at, results=(result,)))

    def finished(self) -> tuple[Turn, ...]:
        return tuple(t.turn() if isinstance(t, TurnDraft) else t for t in self.turns)

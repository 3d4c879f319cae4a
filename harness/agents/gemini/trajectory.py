"""Gemini CLI's chat records as agent-neutral turns for the ATIF export.

The bundle's ``gemini-home/chats/`` holds the parent's record ``session-*.jsonl`` and one
``<parent session id>/<agent id>.jsonl`` per subagent (the line format is in
:mod:`scorers.gemini.chat`). They are read by the scorer's own reader
(:func:`scorers.gemini.read_run`): messages deduplicated by id (the last version wins, at
the place of the first), ``$set`` patches applied, so the threads are named, placed and
linked exactly as the evidence has them. A thread's turns, in record order:

* ``user``: each ``user`` message with text (the task, a subagent's prompt, the client's
  grace-turn nudge); the client's ``<session_context>`` message is left out;
* ``agent``: one per ``gemini`` message (one model response): its text, its ``thoughts``
  as reasoning, its tool calls with the results the record keeps on each call, the model
  it names and its tokens billed as the scorer bills them;
* ``system``: ``info`` and ``error`` messages, and a function response that answers no
  call of the thread.

The parent is the session the evidence names; the children are the subagents the evidence
knows as child sessions (child id = agent id), labelled with their spawn's worker name; a
spawn's call is the parent's ``invoke_agent`` call that names the agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from harness.agents.gemini.collect import Bundle, chat_openers
from harness.model.trajectory import Call, Swarm, Thread, Turn, TurnDraft, TurnLog
from scorers.gemini import Chat, GeminiInputs, read_run, spawn_calls
from scorers.records import RunEvidence

#: The thread id of a parent the record does not name (no readable parent record).
UNNAMED_PARENT: Final = "parent"
#: The client's own context message (not the task).
CONTEXT_PREFIX: Final = "<session_context>"
#: Message types that are the runtime's words, not the user's or the model's.
SYSTEM_TYPES: Final = frozenset({"info", "error", "warning"})


def chat_turns(chat: Chat) -> tuple[Turn, ...]:
    """One chat record's turns, in order."""
    log = TurnLog()
    called: set[str] = set()
    for message in chat.messages:
        if message.type == "gemini":
            draft = TurnDraft(message.at, message.model, usage=message.usage)
            if message.text:
                draft.texts.append(message.text)
            if message.thoughts:
                draft.reasoning.append(message.thoughts)
            log.add(draft)
            for call in message.calls:
                log.call(draft, Call(call.call_id, call.name, dict(call.args)))
                called.add(call.call_id)
                answer = call.output if call.output is not None else call.error
                if answer is not None:
                    log.result(call.call_id, answer, call.at)
        elif message.type == "user":
            for call_id, text in message.responses:
                if call_id not in called:  # a call's own record already gave its result
                    log.result(call_id or None, text, message.at)
            if message.text and not message.text.lstrip().startswith(CONTEXT_PREFIX):
                log.add(Turn("user", message.text, message.at))
        elif message.type in SYSTEM_TYPES or message.text:
            log.add(Turn("system", message.text, message.at))
    return log.finished()


def _failed(turns: tuple[Turn, ...], error: str | None, at: str | None) -> tuple[Turn, ...]:
    """``turns`` closed by the failed model call the thread ended on (its error as the
    evidence has it: a failed request leaves no message in the record)."""
    return (*turns, Turn("agent", at=at, error=error)) if error is not None else turns


def build_swarm(item_dir: Path, meta: Mapping[str, Any], evidence: RunEvidence) -> Swarm:
    """The swarm of a Gemini CLI run from its bundle (``meta`` adds nothing the records do
    not say); ``evidence`` is what the scorer read from the same bundle."""
    run = read_run(GeminiInputs(chats=chat_openers(Bundle(item_dir))))
    named = evidence.session.header_id if evidence.session is not None else None
    parent_chat = run.parent if run.parent is not None and run.session_id == named else None
    parent_chat = parent_chat or (run.parent if named is None else None)
    parent_id = named or run.session_id or UNNAMED_PARENT
    session = evidence.session
    ended = (
        session.usage.first_error if session and session.usage.failed_assistant_messages else None
    )
    parent = Thread(
        parent_id,
        _failed(
            chat_turns(parent_chat) if parent_chat is not None else (),
            ended,
            session.ended_at if session is not None else None,
        ),
    )
    names = {s.child_id: s.name for s in evidence.depth1_spawns()}
    children = tuple(
        Thread(
            c.child_id,
            _failed(
                chat_turns(run.children[c.child_id]),
                next((f.message for f in reversed(c.faults) if not f.retried), None),
                c.ended_at,
            ),
            names.get(c.child_id) or None,
        )
        for c in evidence.child_sessions
        if c.child_id in run.children
    )
    wanted = {c.thread_id for c in children}
    calls = spawn_calls(run.invocations()) if parent_chat is not None else {}
    return Swarm(parent, children, {k: v for k, v in calls.items() if k in wanted}, None)


__all__ = ["build_swarm", "chat_turns"]

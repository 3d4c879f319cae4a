"""Turn what one Gemini CLI run left on disk into agent-neutral :class:`RunEvidence`.

Only the openers the collector handed over are called. The mapping onto the records:

* the parent is the chat record of kind ``main`` at the top of ``chats/`` (the one the
  stream's ``init`` names when there are several, else the earliest); its path and id are
  its ``sessionId``;
* a spawn edge per ``invoke_agent`` call of the parent that started a subagent (it names
  an ``agentId``), in record order, retries and duplicates kept: child id = the
  ``agentId``, child path = ``<parent session id>/<agentId>.jsonl`` (where the client
  writes the subagent's record), depth 1 (subagents cannot start agents), time = the
  calling message's, name = the worker of the prompt's ``Worker:`` line
  (:func:`scorers.gemini.invoke.worker_of`). A call that started nothing (``not found``)
  is no edge; Gemini CLI never renames or deletes a subagent;
* a receipt per call the parent heard the end of (:mod:`scorers.gemini.invoke`): a reply
  when the subagent finished with ``complete_task`` (termination reason ``GOAL``), else a
  failure notice (any other reason, ``failed``; ``not found`` under the id
  ``unstarted:<call id>``, which no edge has);
* a reply's text is the result the parent received (the text after ``Result:``) when it
  is exactly the subagent's own last ``complete_task`` result in its record, else empty
  (the subagent's words cannot vouch for it);
* a child session per subagent record below the parent's folder: it names the parent's
  session (its folder), sits at depth 1 (kind ``subagent``), holds the parent's task when
  its first user message is the prompt of the call that started it, worked when it has a
  model response; its usage, and its faults: the ``error`` messages of its record and the
  API error the parent was told it failed with;
* a write per successful ``replace`` / ``write_file`` call of a thread
  (:mod:`scorers.gemini.edits`): the parent's, then each subagent's under its agent id.

Usage is the chat records', one record per model response (each ``gemini`` message's
``tokens``, billed as :func:`scorers.gemini.chat.billed` says): the parent's own, the
children's from their records. The stream is not a second source (its counts leave out
the thinking tokens).
"""

from __future__ import annotations

from scorers.gemini.chat import SUBAGENT, Chat
from scorers.gemini.edits import chat_writes
from scorers.gemini.invoke import completed_result, failure_error, heard, worker_of
from scorers.gemini.run import GeminiRun, read_run
from scorers.gemini.tally import api_fault, chat_tally, responses
from scorers.gemini.types import GeminiInputs
from scorers.records import (
    NO_TOKENS,
    ChildNotice,
    ChildReply,
    ChildSession,
    LedgerParse,
    ReceiptIndex,
    RunEvidence,
    SessionParse,
    SpawnEvent,
    rootless_evidence,
)

#: Child id of the notice a call that started no subagent got (``not found``).
UNSTARTED_PREFIX = "unstarted:"


def _receipts(
    run: GeminiRun,
) -> tuple[list[ChildReply], list[ChildNotice], dict[str, tuple[str, str | None]]]:
    """The parent's receipts, and per subagent that failed the error it was told of (with
    when)."""
    replies: list[ChildReply] = []
    notices: list[ChildNotice] = []
    failed: dict[str, tuple[str, str | None]] = {}
    for inv in run.invocations():
        call, told = inv.call, heard(inv.call)
        at = call.at or inv.message.at
        if told.outcome == "pending":
            continue
        agent = call.agent_id
        if agent is None:
            notices.append(ChildNotice(UNSTARTED_PREFIX + call.call_id, "failure", told.text, at))
            continue
        if told.outcome == "finished":
            child = run.children.get(agent)
            own = (
                completed_result(tuple(c for m in child.messages for c in m.calls))
                if child
                else None
            )
            same = (
                own is not None and told.result is not None and own.strip() == told.result.strip()
            )
            replies.append(ChildReply(agent, told.result if same and told.result else "", at))
            continue
        notices.append(ChildNotice(agent, "failure", told.text, at))
        if told.outcome == "failed":
            failed[agent] = (failure_error(told.text), at)
    return replies, notices, failed


def _spawns(run: GeminiRun, sid: str) -> tuple[list[SpawnEvent], dict[str, str]]:
    """A spawn edge per call that started a subagent, and each subagent's prompt."""
    events: list[SpawnEvent] = []
    prompts: dict[str, str] = {}
    for inv in run.invocations():
        agent = inv.call.agent_id
        if agent is None:
            continue
        prompt = inv.call.args.get("prompt")
        if isinstance(prompt, str):
            prompts.setdefault(agent, prompt)
        events.append(
            SpawnEvent(
                child_id=agent,
                child=f"{sid}/{agent}.jsonl",
                child_session_id=agent,
                parent=sid,
                depth=1,
                name=worker_of(inv.call, run.workers),
                at=inv.message.at or inv.call.at or "",
            )
        )
    return events, prompts


def _child(
    agent: str, chat: Chat, sid: str, prompt: str | None, failed: tuple[str, str | None] | None
) -> ChildSession:
    error, at = failed if failed is not None else (None, None)
    final = api_fault(agent, error, at=at) if error is not None else None
    tally = chat_tally(chat, agent, error, final)
    first = next((m.text for m in chat.messages if m.type == "user"), None)
    own = chat.session_id in (None, agent)
    holds = own and prompt is not None and first is not None and first.strip() == prompt.strip()
    return ChildSession(
        child_id=agent,
        location=(sid, f"{agent}.jsonl"),
        parent_session=sid,
        depth=1 if chat.kind == SUBAGENT else None,
        started_at=chat.started_at,
        tasks=frozenset({(sid, agent)}) if holds else frozenset(),
        worked=responses(chat) > 0,
        ended_at=chat.ended_at,
        usage=tally.usage,
        faults=tally.faults,
        ended_in_fault=tally.ended_in_fault,
        unseen_calls=tally.unseen_calls,
    )


def run_evidence(run: GeminiRun) -> RunEvidence:
    """The evidence of a parsed run."""
    stream = run.stdout.stream if run.stdout is not None else None
    parent, sid = run.parent, run.session_id
    if parent is None or sid is None:
        hint = run.stdout.session_id if run.stdout is not None else None
        return rootless_evidence(hint, run.broken, stream, run.answers)
    events, prompts = _spawns(run, sid)
    replies, notices, failed = _receipts(run)
    sessions = [
        _child(agent, chat, sid, prompts.get(agent), failed.get(agent))
        for agent, chat in run.children.items()
    ]
    writes = list(chat_writes(parent, None))
    for agent, chat in run.children.items():
        writes += chat_writes(chat, agent)
    error = run.stdout.error if run.stdout is not None else None
    final = stream.final_fault if stream is not None else None
    return RunEvidence(
        parent_paths=(sid,),
        ledger=LedgerParse(events=tuple(events)),
        session=SessionParse(
            header_id=sid,
            receipts=ReceiptIndex(
                frozenset(r.sender_session_id for r in replies),
                frozenset(n.child_id for n in notices),
            ),
            child_usage=sum((s.usage for s in sessions), NO_TOKENS),
            usage=chat_tally(parent, "parent", error, final, run.retried),
            malformed_lines=parent.malformed + run.broken,
            replies=tuple(replies),
            notices=tuple(notices),
            child_usage_exact=True,
            started_at=parent.started_at,
            ended_at=parent.ended_at,
        ),
        stream=stream,
        answers=run.answers,
        child_sessions=tuple(sessions),
        child_session_dirs=len(run.children),
        child_malformed_lines=sum(c.malformed for c in run.children.values()),
        writes=tuple(writes),
        usage_by_model=run.by_model(),
        off_model=run.other_models(),
    )


def gemini_evidence(inputs: GeminiInputs) -> RunEvidence:
    """Parse every file of one run, then map it onto the agent-neutral records."""
    return run_evidence(read_run(inputs))


__all__ = ["UNSTARTED_PREFIX", "gemini_evidence", "run_evidence"]

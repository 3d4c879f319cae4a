"""Turn what one Claude Code run left on disk into agent-neutral :class:`RunEvidence`.

Only the openers the collector handed over are called. The mapping onto the records:

* a spawn edge per ``Agent`` call of the parent: child id = the subagent's ``agentId``,
  child path = ``<session>/subagents/agent-<agentId>.jsonl``, parent = the parent session
  id, depth = the meta file's ``spawnDepth`` (1 without one: the call is the parent's
  own), name = the call's ``description``;
* a receipt per delivered result (completed: a reply; an error or a failed, killed or
  stopped notification: a notice);
* a reply's text is that subagent's own final report from its transcript, never the
  framed text the parent saw (the frame's ``<usage>`` numbers could vouch for any answer);
* a child session per subagent transcript of this parent session: it names the parent
  session, sits at the meta file's depth, holds the parent's task when its first prompt is
  the prompt of the spawn it belongs to, and worked when one of its model turns succeeded;
* a write per file change a transcript's own tool calls made (:mod:`.edits`): the
  parent's with no child id, each subagent's with its ``agentId`` (the child id of its
  spawn edge), the parent's first, then each subagent's in transcript order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scorers.artifact import parse_artifact
from scorers.claude_code.parent import ParentParse, Spawn, parse_parent_transcript
from scorers.claude_code.stream import parse_stream
from scorers.claude_code.subagent import (
    SubagentMeta,
    SubagentParse,
    parse_meta,
    parse_subagent_transcript,
)
from scorers.claude_code.types import ClaudeCodeArtifacts, SubagentFile
from scorers.faults import MID_ANSWER, ProviderFault
from scorers.records import (
    NO_TOKENS,
    ChildNotice,
    ChildReply,
    ChildSession,
    FileWrite,
    LedgerParse,
    ReceiptIndex,
    RunEvidence,
    SessionParse,
    SpawnEvent,
    StreamParse,
    UsageTally,
)
from scorers.types import read_opened

#: Child id of a spawn the client never started an agent for (no id anywhere on disk).
UNSTARTED_PREFIX = "unstarted:"


@dataclass(frozen=True, slots=True)
class _Subagent:
    file: SubagentFile
    meta: SubagentMeta | None
    transcript: SubagentParse | None


def subagent_path(session_id: str, agent_id: str) -> tuple[str, str, str]:
    """Where a subagent's transcript sits below the project folder."""
    return (session_id, "subagents", f"agent-{agent_id}.jsonl")


def _agent_ids(parent: ParentParse, subagents: list[_Subagent]) -> dict[str, str]:
    """Spawn tool_use_id -> agent id: the client's answer to the spawn, else the meta file
    naming the spawn, else a notification's task id."""
    ids: dict[str, str] = {}
    for delivery in parent.deliveries:
        if delivery.agent_id:
            ids.setdefault(delivery.tool_use_id, delivery.agent_id)
    for sub in subagents:
        if sub.meta is not None and sub.meta.tool_use_id:
            ids[sub.meta.tool_use_id] = sub.file.agent_id
    ids.update(parent.agent_ids)
    return ids


def _spawn_event(
    spawn: Spawn, agent_id: str | None, session_id: str, depths: Mapping[str, int]
) -> SpawnEvent:
    child_id = agent_id or UNSTARTED_PREFIX + spawn.tool_use_id
    return SpawnEvent(
        child_id=child_id,
        child="/".join(subagent_path(session_id, child_id)),
        child_session_id=child_id,
        parent=session_id,
        depth=depths.get(child_id, 1),
        name=spawn.name,
        at=spawn.at or "",
    )


def _named(
    faults: Sequence[ProviderFault], retries: Sequence[ProviderFault]
) -> list[ProviderFault]:
    """``faults`` with each retried one of unrecorded cause named by the stream's next
    announced retry of the same session, where it announced one."""
    announced = iter(retries)
    named = []
    for fault in faults:
        if fault.kind == "unknown" and fault.retried:
            retry = next(announced, None)
            if retry is not None:
                fault = dataclasses.replace(
                    fault, kind=retry.kind, status=retry.status, message=retry.message
                )
        named.append(fault)
    return named


def with_faults(
    tally: UsageTally, session: str, stream: StreamParse | None, ended: bool | None = None
) -> UsageTally:
    """``tally`` with its faults named from the stream's retries of ``session``, its calls
    that may hold unseen usage counted, and (``ended``) whether the run ended on a fault."""
    retries = [r for r in stream.retries if r.session == session] if stream else []
    faults = _named(tally.faults, retries)
    return dataclasses.replace(
        tally,
        faults=tuple(faults),
        ended_in_fault=tally.ended_in_fault if ended is None else ended,
        unseen_calls=sum(1 for f in faults if f.kind in MID_ANSWER),
    )


def _child_session(
    sub: _Subagent, session_id: str, prompts: Mapping[str, str], stream: StreamParse | None
) -> ChildSession:
    agent_id = sub.file.agent_id
    location = subagent_path(session_id, agent_id)
    parsed = sub.transcript
    if parsed is None:
        return ChildSession(agent_id, location)
    tally = with_faults(parsed.usage, agent_id, stream)
    holds_task = (
        parsed.agent_id == agent_id
        and parsed.prompt is not None
        and prompts.get(agent_id) == parsed.prompt
    )
    return ChildSession(
        child_id=agent_id,
        location=location,
        parent_session=parsed.session_id,
        depth=sub.meta.spawn_depth if sub.meta is not None else None,
        started_at=parsed.started_at,
        tasks=frozenset({(session_id, agent_id)}) if holds_task else frozenset(),
        worked=parsed.usage.assistant_messages > parsed.usage.failed_assistant_messages,
        ended_at=parsed.ended_at,
        usage=parsed.usage.usage,
        faults=tally.faults,
        ended_in_fault=tally.ended_in_fault,
        unseen_calls=tally.unseen_calls,
    )


def _session(
    parent: ParentParse,
    session_id: str,
    ids: Mapping[str, str],
    subagents: Mapping[str, _Subagent],
    usage: UsageTally,
) -> SessionParse:
    spawn_ids = {s.tool_use_id for s in parent.spawns}
    replied: set[str] = set()
    replies: list[ChildReply] = []
    notices: list[ChildNotice] = []
    for delivery in parent.deliveries:
        agent_id = ids.get(delivery.tool_use_id)
        if delivery.tool_use_id not in spawn_ids or agent_id is None:
            continue
        if delivery.outcome == "failed":
            notices.append(ChildNotice(agent_id, "failure", "", delivery.at))
            continue
        replied.add(agent_id)
        sub = subagents.get(agent_id)
        report = sub.transcript.final_report if sub and sub.transcript else ""
        replies.append(ChildReply(agent_id, report, delivery.at))
    child_usage = NO_TOKENS
    for sub in subagents.values():
        if sub.transcript is not None:
            child_usage = child_usage + sub.transcript.usage.usage
    return SessionParse(
        header_id=session_id,
        receipts=ReceiptIndex(frozenset(replied), frozenset(n.child_id for n in notices)),
        child_usage=child_usage,
        child_usage_exact=False,  # transcripts keep placeholder output counts
        started_at=parent.started_at,
        ended_at=parent.ended_at,
        usage=usage,
        malformed_lines=parent.malformed_lines,
        replies=tuple(replies),
        notices=tuple(notices),
    )


def _writes(parent: ParentParse, subagents: Sequence[_Subagent]) -> tuple[FileWrite, ...]:
    """The parent's writes, then each subagent's under its agent id (its spawn edge's child
    id; a subagent no edge names, such as a nested one, still keeps its own id)."""
    found = list(parent.writes)
    for sub in subagents:
        if sub.transcript is not None:
            agent_id = sub.file.agent_id
            found += (w._replace(child_id=agent_id) for w in sub.transcript.writes)
    return tuple(found)


def collect_evidence(artifacts: ClaudeCodeArtifacts) -> RunEvidence:
    """Parse every artifact of one run (missing ones stay ``None``)."""
    parent = read_opened(artifacts.parent_transcript, parse_parent_transcript)
    session_id = artifacts.parent_session_id or (parent.session_id if parent else None)
    mine = [f for f in artifacts.subagents if session_id and f.session_dir == session_id]
    subs = [
        _Subagent(
            f, read_opened(f.meta, parse_meta), read_opened(f.transcript, parse_subagent_transcript)
        )
        for f in mine
    ]
    by_agent = {s.file.agent_id: s for s in subs}
    malformed_children = sum(
        (s.transcript.malformed_lines if s.transcript else 0)
        + (1 if s.meta is not None and s.meta.malformed else 0)
        for s in subs
    )
    stream = read_opened(artifacts.stdout, parse_stream)
    answers = read_opened(artifacts.artifact, parse_artifact)
    if parent is None or session_id is None:
        return RunEvidence(
            parent_paths=(),
            ledger=LedgerParse(events=()),
            session=None,
            stream=stream,
            answers=answers,
            child_sessions=(),
            child_session_dirs=len(by_agent),
            child_malformed_lines=malformed_children,
        )
    # The parent's faults: the transcript's (its retries named by the stream), ended on a
    # fault when the run's last result did (a failed turn is not a failed run). The stream's
    # tally carries the same, so whichever source the usage rule picks tells them.
    ended = (stream.final_fault is not None) if stream and stream.reported else None
    usage = with_faults(parent.usage, "parent", stream, ended)
    if stream is not None:
        stream = dataclasses.replace(
            stream,
            usage=dataclasses.replace(
                stream.usage,
                faults=usage.faults,
                ended_in_fault=usage.ended_in_fault,
                unseen_calls=usage.unseen_calls,
            ),
        )
    ids = _agent_ids(parent, subs)
    depths = {
        s.file.agent_id: s.meta.spawn_depth
        for s in subs
        if s.meta is not None and s.meta.spawn_depth is not None
    }
    events = tuple(
        _spawn_event(spawn, ids.get(spawn.tool_use_id), session_id, depths)
        for spawn in parent.spawns
    )
    prompts = {
        ids[spawn.tool_use_id]: spawn.prompt for spawn in parent.spawns if spawn.tool_use_id in ids
    }
    return RunEvidence(
        parent_paths=(session_id,),
        ledger=LedgerParse(events=events),
        session=_session(parent, session_id, ids, by_agent, usage),
        stream=stream,
        answers=answers,
        child_sessions=tuple(_child_session(s, session_id, prompts, stream) for s in subs),
        child_session_dirs=len(by_agent),
        child_malformed_lines=malformed_children,
        writes=_writes(parent, subs),
    )


__all__ = ["UNSTARTED_PREFIX", "collect_evidence", "subagent_path"]

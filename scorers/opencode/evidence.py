"""Turn what one opencode run left on disk into agent-neutral :class:`RunEvidence`.

Only the openers the collector handed over are called. The mapping onto the records:

* the parent is the root session; its path is its id, a session's path is the ids from
  the root down to it (``<root>/<child>``);
* a spawn edge per ``task`` call made in the tree, in creation order: child id = the child
  session's id (``unstarted:<callID>`` when the call names none), child path = the
  caller's path + ``/<child id>``, depth = the caller's depth + 1, name = the call's
  ``description``, time = when the call's part was stored. opencode never deletes or
  renames a child, so a second call with a name while the first child exists is a
  duplicate (a call resuming the same child is the same edge again);
* a receipt per call the caller heard back from: a ``completed`` result framed
  ``state="completed"`` is a reply from the child, a failed call (``error``) a failure
  notice; a background call's immediate ``running`` answer is neither;
* a reply's text is the child's own final text (the last text part of its last assistant
  message by the time the call ended), and only when the caller really received it: the
  completed result's ``<task_result>`` body equals it. Otherwise the reply carries no text
  (the parent got something else, so the child's words cannot vouch for an answer);
* a child session per session below the root: it names its parent's path, sits at its
  depth, holds the caller's task when one of its user messages is the prompt of a call
  that names it, worked when one of its own model turns succeeded; its usage is its own
  messages' tokens;
* a file write per completed ``edit``, ``write``, ``apply_patch`` or successful ``bash``
  part of the root (writer ``None``) or of a session below it (writer: its session id, the
  child id its spawn edge carries), paths relative to the repo
  (:mod:`scorers.opencode.writes`).

Usage is the database's, per assistant message: the root's messages are the parent's, the
sessions below it the children's, both exact. stdout's own tally of the root's messages is
handed on only when the database has no root session (missing, unreadable, or the run died
before creating it), so whenever the database can be read the rubric counts it alone.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from typing import IO, Final

from scorers.artifact import parse_artifact
from scorers.faults import MID_ANSWER, ProviderFault, classify
from scorers.opencode.log import StreamError, parse_log
from scorers.opencode.spawns import Spawn
from scorers.opencode.store import MAX_DB_BYTES, Store, read_store
from scorers.opencode.stream import StdoutParse, parse_stdout
from scorers.opencode.tree import RunTree, SessionView, build_tree
from scorers.opencode.types import OpencodeInputs
from scorers.opencode.writes import message_cwds, session_writes
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
    UsageTally,
    rootless_evidence,
)
from scorers.types import read_opened

#: Child id of a spawn that names no child session.
UNSTARTED_PREFIX: Final = "unstarted:"


def _read_bytes(stream: IO[bytes]) -> bytes:
    return stream.read(MAX_DB_BYTES + 1)  # one byte over: read_store refuses it


def iso(ms: int | None) -> str | None:
    """Epoch milliseconds as ISO-8601 UTC, ``None`` for none (or an impossible value)."""
    if ms is None:
        return None
    try:
        moment = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds")


def child_id_of(spawn: Spawn) -> str:
    return spawn.child_id or UNSTARTED_PREFIX + spawn.call_id


def _reply_text(spawn: Spawn, child: SessionView | None) -> str:
    """The child's own final text when the caller received exactly that, else ``""``."""
    if child is None or spawn.output is None:
        return ""
    said = child.final_text(spawn.ended)
    if said is None:
        return ""
    frame = spawn.frame
    if frame is not None:
        return said if frame.body == said else ""
    return said if said and said in spawn.output else ""


def _receipts(
    spawns: Sequence[Spawn], views: dict[str, SessionView]
) -> tuple[list[ChildReply], list[ChildNotice]]:
    replies: list[ChildReply] = []
    notices: list[ChildNotice] = []
    for spawn in spawns:
        child_id = child_id_of(spawn)
        at = iso(spawn.ended)
        if spawn.status == "error":
            notices.append(ChildNotice(child_id, "failure", spawn.error or "", at))
        elif spawn.status == "completed":
            frame = spawn.frame
            if frame is not None and frame.state != "completed":
                continue  # a background task's "running": the child has not answered
            replies.append(ChildReply(child_id, _reply_text(spawn, views.get(child_id)), at))
    return replies, notices


def _child_session(view: SessionView, spawns: Sequence[Spawn]) -> ChildSession:
    tasked = frozenset(
        (spawn.caller, view.id)
        for spawn in spawns
        if spawn.child_id == view.id
        and spawn.caller == view.row.parent_id
        and spawn.prompt in view.prompts
    )
    return ChildSession(
        child_id=view.id,
        location=view.path,
        parent_session="/".join(view.path[:-1]),
        depth=view.depth,
        started_at=iso(view.row.created),
        tasks=tasked,
        worked=view.worked,
        ended_at=iso(view.row.updated),
        usage=view.tally.usage,
        faults=view.tally.faults,
        ended_in_fault=view.tally.ended_in_fault,
        unseen_calls=view.tally.unseen_calls,
    )


def _session(tree: RunTree, root: SessionView, store: Store) -> SessionParse:
    views = {v.id: v for v in tree.below}
    replies, notices = _receipts(tree.spawns, views)
    child_usage = NO_TOKENS
    child_cost = 0.0
    for view in tree.below:
        child_usage = child_usage + view.tally.usage
        child_cost += view.tally.cost_usd or 0.0
    return SessionParse(
        header_id=root.id,
        receipts=ReceiptIndex(
            frozenset(r.sender_session_id for r in replies),
            frozenset(n.child_id for n in notices),
        ),
        child_usage=child_usage,
        usage=root.tally,
        malformed_lines=root.malformed + store.defects + store.malformed.get("", 0),
        replies=tuple(replies),
        notices=tuple(notices),
        child_usage_exact=True,
        child_cost_usd=child_cost or None,
        started_at=iso(root.row.created),
        ended_at=iso(root.row.updated),
    )


def _spawn_events(tree: RunTree, root: SessionView) -> tuple[SpawnEvent, ...]:
    paths = {v.id: v.path for v in (root, *tree.below)}
    events = []
    for spawn in tree.spawns:
        caller = paths.get(spawn.caller)
        if caller is None:
            continue
        child_id = child_id_of(spawn)
        events.append(
            SpawnEvent(
                child_id=child_id,
                child="/".join((*caller, child_id)),
                child_session_id=child_id,
                parent="/".join(caller),
                depth=len(caller),
                name=spawn.description,
                at=iso(spawn.created) or "",
            )
        )
    return tuple(events)


def with_logged_faults(view: SessionView, logged: Sequence[StreamError]) -> SessionView:
    """``view`` with the failed attempts its log lines show beyond the final failures its
    messages record (one line of the same kind stands for each final failure; opencode
    logs a retryable failure, not always a final refusal): each a retried fault, named
    from the error's words."""
    tally = view.tally
    lines = [(classify(None, e.text), e) for e in logged]
    for final in tally.faults:
        same = next((n for n, (kind, _) in enumerate(lines) if kind == final.kind), None)
        if same is not None:
            del lines[same]
    retried = [
        ProviderFault(tally_session(view), kind, None, e.text, True, "", e.at) for kind, e in lines
    ]
    if not retried:
        return view
    faults = (*retried, *tally.faults)
    unseen = tally.unseen_calls + sum(1 for f in retried if f.kind in MID_ANSWER)
    return dataclasses.replace(
        view, tally=dataclasses.replace(tally, faults=faults, unseen_calls=unseen)
    )


def tally_session(view: SessionView) -> str:
    """How a session's faults name it: ``parent`` for the root, else its id."""
    return "parent" if view.depth == 0 else view.id


def _with_log(tree: RunTree, log: Sequence[StreamError]) -> RunTree:
    by_session: dict[str, list[StreamError]] = {}
    for error in log:
        by_session.setdefault(error.session, []).append(error)
    if tree.root is None or not by_session:
        return tree
    return dataclasses.replace(
        tree,
        root=with_logged_faults(tree.root, by_session.get(tree.root.id, ())),
        below=tuple(with_logged_faults(v, by_session.get(v.id, ())) for v in tree.below),
    )


def opencode_evidence(inputs: OpencodeInputs) -> RunEvidence:
    """Parse every file of one run (missing ones stay ``None``)."""
    stdout: StdoutParse | None = read_opened(inputs.stdout, parse_stdout)
    answers = read_opened(inputs.artifact, parse_artifact)
    main, wal = read_opened(inputs.db, _read_bytes), read_opened(inputs.wal, _read_bytes)
    stream = stdout.stream if stdout is not None else None
    hint = stdout.session_id if stdout is not None else None
    store = read_store(main, wal) if main is not None or wal is not None else None
    tree = build_tree(store, hint) if store is not None else RunTree(None)
    tree = _with_log(tree, read_opened(inputs.log, parse_log) or ())
    root = tree.root
    if store is None or root is None:
        # The database is there but holds no readable root: a defect, not absence.
        broken = store.defects + sum(store.malformed.values()) if store is not None else 0
        return rootless_evidence(hint, broken, stream, answers)
    if stream is not None:  # the database counts the parent; stdout is not a second source
        stream = dataclasses.replace(stream, usage=UsageTally())
    return RunEvidence(
        parent_paths=(root.id,),
        ledger=LedgerParse(events=_spawn_events(tree, root)),
        session=_session(tree, root, store),
        stream=stream,
        answers=answers,
        child_sessions=tuple(_child_session(v, tree.spawns) for v in tree.below),
        child_session_dirs=len(tree.below),
        child_malformed_lines=sum(v.malformed for v in tree.below),
        writes=_writes(store, tree, root),
    )


def _writes(store: Store, tree: RunTree, root: SessionView) -> tuple[FileWrite, ...]:
    writers: dict[str, str | None] = {root.id: None}
    writers.update((view.id, view.id) for view in tree.below)
    return session_writes(store.parts, message_cwds(store.messages), writers)


__all__ = ["UNSTARTED_PREFIX", "child_id_of", "iso", "opencode_evidence"]

"""Turn what one prime-agent run left on disk into agent-neutral :class:`RunEvidence`.

Only the openers the collector handed over are called; nothing else is read. Child
sessions live at ``session-artifacts/<parent header id>/<childId>/<file>``, so a collected
depth-1 file backs the ledger edge whose child path ends with exactly those three parts;
without a readable parent header no file can back anything. Each collected depth-1 file is
read for the work it shows (its header, the parent's task, its own model turns).

Each thread's file changes (``writes``) come from its own transcript: the parent's, and
each depth-1 file a spawn edge of this run backs, credited to that edge's child id. A file
no edge of this run backs shows no writes: nothing says whose it is (its changes then have
no writer on record, which fails a shard rather than crediting anyone).
"""

from __future__ import annotations

from scorers.artifact import parse_artifact
from scorers.prime_agent.child_session import parse_child_session
from scorers.prime_agent.ledger import parse_ledger
from scorers.prime_agent.session import parse_session
from scorers.prime_agent.stream import parse_stream
from scorers.prime_agent.types import ChildSessionFile, PrimeAgentArtifacts
from scorers.prime_agent.writes import WriteLog
from scorers.records import (
    ChildSession,
    FileWrite,
    LedgerParse,
    NormPath,
    RunEvidence,
    SpawnEvent,
    normalize_path,
    path_ends_with,
)
from scorers.types import read_opened


def _depth1_files(files: tuple[ChildSessionFile, ...]) -> list[ChildSessionFile]:
    return [f for f in files if len(f.subdirs) == 1]


def _child_session(
    file: ChildSessionFile, header_id: str
) -> tuple[ChildSession, int, tuple[FileWrite, ...]]:
    """The record of one depth-1 file, its malformed line count and the files it changed
    (an unreadable file is present but shows no work)."""
    child_id = file.subdirs[0]
    location = (header_id, child_id, file.file_name)
    if file.opener is None:
        return ChildSession(child_id, location), 0, ()
    writes = WriteLog(child_id)
    with file.opener() as stream:
        session, malformed = parse_child_session(stream, child_id, location, writes)
    return session, malformed, writes.result()


def _backed_writes(
    parsed: list[tuple[ChildSession, int, tuple[FileWrite, ...]]], ledger: LedgerParse
) -> tuple[FileWrite, ...]:
    """The writes of the files a spawn edge of this run (its ledger cut to this parent's
    spawns) names: the same child id, a child path ending with the file's location."""
    if not any(writes for _, _, writes in parsed):
        return ()
    spawned: dict[str, set[NormPath]] = {}
    for event in ledger.events:
        if type(event) is SpawnEvent:
            spawned.setdefault(event.child_id, set()).add(event.child)
    return tuple(
        write
        for child, _, writes in parsed
        if writes
        and any(path_ends_with(path, child.location) for path in spawned.get(child.child_id, ()))
        for write in writes
    )


def _own_spawns(parsed: LedgerParse, parents: frozenset[NormPath]) -> LedgerParse:
    """A ledger parsed with every root's spawns, cut to what ``parse_ledger`` keeps for
    ``parents``: the same events as a parse told to keep only them."""
    events = tuple(e for e in parsed.events if type(e) is not SpawnEvent or e.parent in parents)
    return LedgerParse(events, parsed.malformed_lines, parsed.unknown_ops, parsed.torn_tail)


def _ledger(artifacts: PrimeAgentArtifacts, parents: frozenset[NormPath]) -> LedgerParse:
    if artifacts.ledger_parse is not None:  # the collector read it already: never twice
        return _own_spawns(artifacts.ledger_parse, parents)
    return read_opened(artifacts.ledger, lambda s: parse_ledger(s, parents)) or LedgerParse(
        events=()
    )


def collect_evidence(artifacts: PrimeAgentArtifacts) -> RunEvidence:
    """Parse every artifact of one run (missing ones stay ``None``)."""
    parent_writes = WriteLog(None)
    session = read_opened(artifacts.parent_transcript, lambda s: parse_session(s, parent_writes))
    header_id = session.header_id if session is not None else None
    depth1 = _depth1_files(artifacts.child_sessions)
    parsed = [_child_session(f, header_id) for f in depth1] if header_id is not None else []
    # An empty spelling would match a ledger parent of "/" or "": it names no parent.
    parent_paths = tuple(
        path for path in map(normalize_path, artifacts.parent_session_paths) if path
    )
    ledger = _ledger(artifacts, frozenset(parent_paths))
    writes = parent_writes.result() + _backed_writes(parsed, ledger)
    return RunEvidence(
        parent_paths=parent_paths,
        ledger=ledger,
        session=session,
        stream=read_opened(artifacts.stdout, parse_stream),
        answers=read_opened(artifacts.artifact, parse_artifact),
        child_sessions=tuple(child for child, _, _ in parsed),
        child_session_dirs=len({f.subdirs[0] for f in depth1}),
        child_malformed_lines=sum(malformed for _, malformed, _ in parsed),
        writes=writes,
    )

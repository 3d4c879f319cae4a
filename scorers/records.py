"""Agent-neutral records: what the parsers produce and the rules judge.

Nothing here knows a file format: every agent's parser produces these same records, and
every rule applies unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from scorers.edit_records import FileChange, FileWrite, ShardChecks, TreeEvidence, WriteHow
from scorers.faults import ProviderFault
from scorers.tokens import NO_TOKENS, ReportedUsage, TokenUsage, UsageTally

#: A path as the scorer compares it: its non-empty parts (split on ``/`` and ``\\``) joined
#: by ``/`` (``/a//b``, ``\\a\\b``, ``a/b/`` are all ``a/b``), never canonicalised further
#: (links are the collector's); a string, so the common ``/a/b`` costs only a strip.
NormPath = str

#: A path's tail as separate parts, e.g. ``(<root id>, <child id>, <file name>)``.
PathParts = tuple[str, ...]


__all__ = ["NO_TOKENS", "ReportedUsage", "TokenUsage", "UsageTally"]  # re-exported
__all__ += ["FileChange", "FileWrite", "ShardChecks", "TreeEvidence", "WriteHow"]


def normalize_path(path: str) -> NormPath:
    """``path`` in comparable form: non-empty parts joined by ``/``."""
    if "\\" in path:
        path = path.replace("\\", "/")
    if "//" in path or path[-1:] == "/":
        return "/".join(filter(None, path.split("/")))
    return path.lstrip("/")  # at most one leading "/" is left here


def path_ends_with(path: NormPath, tail: PathParts) -> bool:
    """Whether the last parts of ``path`` are exactly ``tail`` (never true for no tail)."""
    if not tail or any(not part or "/" in part or "\\" in part for part in tail):
        return False
    suffix = "/".join(tail)
    return path == suffix or path.endswith("/" + suffix)


def last_part(path: NormPath) -> str:
    """The final part of ``path`` (its file name), or ``""`` for an empty path."""
    return path.rpartition("/")[2]


# ---------------------------------------------------------------------------- spawn ledger
# Ledger events are NamedTuples: a ledger holds up to 100,000, and a frozen dataclass cost
# about 3x as much to build (1.9 vs 0.6 us; 0.13 s per capped ledger).


class SpawnEvent(NamedTuple):
    """A child session was (re)created under ``parent`` at ``depth`` with ``name``.

    ``child_session_id`` is the id the child uses when it messages its parent (for
    prime-agent, the child file's stem).
    """

    child_id: str
    child: NormPath
    child_session_id: str
    parent: NormPath
    depth: int
    name: str
    at: str


class RenameEvent(NamedTuple):
    """The existing child ``(child_id, child)`` now goes by ``name``."""

    child_id: str
    child: NormPath
    name: str
    at: str


class DeleteEvent(NamedTuple):
    """The existing child ``(child_id, child)`` was deleted."""

    child_id: str
    child: NormPath
    at: str


LedgerEvent = SpawnEvent | RenameEvent | DeleteEvent


@dataclass(frozen=True, slots=True)
class LedgerParse:
    """The ledger's events in file order, plus what had to be skipped."""

    events: tuple[LedgerEvent, ...]
    malformed_lines: int = 0
    unknown_ops: int = 0
    torn_tail: bool = False


# ------------------------------------------------------------------ parent transcript


class ChildReply(NamedTuple):
    """A message a child sent its parent, as the parent's transcript recorded it.

    ``sender_session_id`` names the child (its session id); ``text`` is the message body
    (``""`` when it carried none); ``at`` is when the parent received it (an ISO-8601
    string), ``None`` when the entry had no timestamp.
    """

    sender_session_id: str
    text: str
    at: str | None


NoticeKind = Literal["notice", "failure"]


class ChildNotice(NamedTuple):
    """The runtime telling the parent that a child ended without a reply (``notice``:
    finished silently, cancelled) or failed (``failure``), as the parent's transcript
    recorded it. ``child_id`` is the spawn's child id; ``at`` is when the parent got it
    (ISO-8601), ``None`` without a timestamp; ``text`` is what the parent was told."""

    child_id: str
    kind: NoticeKind
    text: str
    at: str | None


@dataclass(frozen=True, slots=True)
class ReceiptIndex:
    """Evidence in the parent's transcript that children were heard from.

    ``reply_session_ids``: session ids of children that messaged the parent as its child;
    ``notice_child_ids``: ledger child ids reported finished without a reply, cancelled or failed.
    """

    reply_session_ids: frozenset[str] = frozenset()
    notice_child_ids: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class SessionParse:
    """The parent transcript: its id, the receipts it holds and the usage it records.

    ``child_usage`` is what the transcript attributes to children (prime-agent) or what
    the children's own transcripts hold (Claude Code), with ``child_usage_exact`` False
    when that source under-counts and ``child_cost_usd`` the agent's own price of it.
    ``started_at`` / ``ended_at`` are its first and last timestamps (ISO-8601).
    """

    header_id: str | None
    receipts: ReceiptIndex
    child_usage: TokenUsage
    usage: UsageTally
    malformed_lines: int = 0
    replies: tuple[ChildReply, ...] = ()
    #: Every notice and failure, in transcript order (``receipts`` holds their child ids).
    notices: tuple[ChildNotice, ...] = ()
    child_usage_exact: bool = True
    child_cost_usd: float | None = None
    started_at: str | None = None
    ended_at: str | None = None


@dataclass(frozen=True, slots=True)
class StreamParse:
    """The parent's live event stream. ``events`` counts every readable event line (the
    session header is not an event). ``reported`` is the agent's own account of the run's
    usage when the stream carries one; ``cut_short`` says the stream ended in the middle of
    a turn (the agent was stopped), so what it records may lack the last model calls."""

    events: int
    usage: UsageTally
    malformed_lines: int = 0
    reported: ReportedUsage | None = None
    cut_short: bool = False
    #: Retries the stream announced (``session``: parent, or the child id), with the
    #: status where it says: what names the cause of a retried request a transcript keeps
    #: no error for.
    retries: tuple[ProviderFault, ...] = ()
    #: The fault the run's last result ended on (None: it did not end on one, or the
    #: stream has no result).
    final_fault: ProviderFault | None = None


# -------------------------------------------------------------------- answers and files


@dataclass(frozen=True, slots=True)
class Bullet:
    """One ``- <file>: <answer>`` line of the answer artifact, file name normalised."""

    file: str
    answer: str


@dataclass(frozen=True, slots=True)
class ArtifactParse:
    """Every answer bullet of the artifact, in order."""

    bullets: tuple[Bullet, ...]
    unreadable_lines: int = 0


@dataclass(frozen=True, slots=True)
class ChildSession:
    """A child transcript really present on disk, and what it shows the child did.

    ``location`` is the tail a ledger edge's child path must end with for this file to
    be that edge's session (e.g. ``(<root id>, <child id>, <file name>)``).

    The rest is read from the file itself (``None`` / empty when it does not say):
    ``parent_session``, the parent transcript its header names; ``depth``, its depth below
    the root; ``started_at``, when it began (ISO-8601); ``tasks``, the task messages it
    holds as ``(sender session id, child id the task was addressed to)``; ``worked``,
    whether at least one of its own model turns ended without error.
    """

    child_id: str
    location: PathParts
    parent_session: NormPath | None = None
    depth: int | None = None
    started_at: str | None = None
    tasks: frozenset[tuple[str, str]] = frozenset()
    worked: bool = False
    #: Its last timestamp (ISO-8601): with ``started_at``, when the child was busy.
    ended_at: str | None = None
    #: The tokens its own model turns used, as its transcript records them.
    usage: TokenUsage = NO_TOKENS
    #: Its model calls that failed at the provider; whether its last model call was one (it
    #: gave up there); calls it recorded no usage for that may have been billed.
    faults: tuple[ProviderFault, ...] = ()
    ended_in_fault: bool = False
    unseen_calls: int = 0


UsageSource = Literal["stream", "transcript"]


@dataclass(frozen=True, slots=True)
class RunEvidence:
    """Everything the rules judge about one run, already parsed.

    ``stream``, ``session`` and ``answers`` are ``None`` when the live event stream, the
    parent transcript or the answer artifact is missing.
    """

    parent_paths: tuple[NormPath, ...]
    ledger: LedgerParse
    session: SessionParse | None
    stream: StreamParse | None
    answers: ArtifactParse | None
    child_sessions: tuple[ChildSession, ...]
    child_session_dirs: int
    child_malformed_lines: int = 0
    #: Edit fixtures: every file change the threads' own records show; the final tree.
    writes: tuple[FileWrite, ...] = ()
    tree: TreeEvidence | None = None
    #: Tokens per model as the records name each request's model (empty: they do not), and
    #: the models among them the run was not asked for (a client that switched models).
    usage_by_model: tuple[tuple[str, TokenUsage], ...] = ()
    off_model: tuple[str, ...] = ()

    def depth1_spawns(self) -> tuple[SpawnEvent, ...]:
        """Every spawn the parent made directly (depth 1, under one of its own paths), in
        ledger order: retries and duplicates included, deletes not undone."""
        parents = set(self.parent_paths)
        return tuple(
            e
            for e in self.ledger.events
            if type(e) is SpawnEvent and e.depth == 1 and e.parent in parents
        )


def rootless_evidence(
    hint: str | None,
    broken: int,
    stream: StreamParse | None,
    answers: ArtifactParse | None,
) -> RunEvidence:
    """The evidence of a run whose record holds no readable parent: its stream and its
    answers only. ``broken`` counts the record's unreadable parts: when there are any, the
    record was there but damaged (a defect, counted as a parent session's malformed lines,
    under the stream's id ``hint``), not absent."""
    session = None
    if broken:
        session = SessionParse(hint, ReceiptIndex(), NO_TOKENS, UsageTally(), broken)
    return RunEvidence(
        parent_paths=(hint,) if hint and session is not None else (),
        ledger=LedgerParse(events=()),
        session=session,
        stream=stream,
        answers=answers,
        child_sessions=(),
        child_session_dirs=0,
    )

"""What the prime-agent collector hands its parsers: openers over the files it found."""

from __future__ import annotations

from dataclasses import dataclass, field

from scorers.records import LedgerParse
from scorers.types import Opener


@dataclass(frozen=True)
class ChildSessionFile:
    """A child session file the collector really found on disk.

    ``subdirs`` is the chain of ``sub-XXXXXXXX`` directories below
    ``session-artifacts/<parent header id>/`` (one entry for a depth-1 child, two for a
    grandchild); ``file_name`` is the ``.jsonl`` file inside the last one; ``opener``
    reads it (``None``: listed but unreadable, so it shows no work).
    """

    subdirs: tuple[str, ...]
    file_name: str
    opener: Opener | None = field(default=None, compare=False)


@dataclass(frozen=True)
class PrimeAgentArtifacts:
    """What one prime-agent run left on disk, as the collector found it.

    ``parent_session_paths`` are the spellings (canonical and plain absolute forms) of the parent
    transcript's absolute path as the agent itself would have written it into the ledger's
    ``parent`` field; edges whose ``parent`` matches none of them belong to another root.
    A missing artifact is ``None``.
    """

    parent_session_paths: tuple[str, ...]
    ledger: Opener | None = None
    #: The ledger already parsed (every root's spawns kept), when the collector had to
    #: read it to find the parent: it is then not read a second time.
    ledger_parse: LedgerParse | None = None
    parent_transcript: Opener | None = None
    stdout: Opener | None = None
    artifact: Opener | None = None
    child_sessions: tuple[ChildSessionFile, ...] = field(default_factory=tuple)

"""Typed inputs and outputs of the scorer.

The scorer is pure: it never opens a path itself. The collector (in ``harness``) hands it
byte-stream *openers* for each artifact plus the list of child session files it found, and
gets back an :class:`ItemScore`. Re-scoring a saved bundle builds the same inputs from the
bundle and must give the identical verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

#: Opens a fresh binary stream over one artifact. Called at most a few times per score.
Opener = Callable[[], IO[bytes]]

#: 2: the ``provenance`` criterion and its fields. 3: ``checks``, one per registry criterion.
SCORE_SCHEMA_VERSION = 3


@dataclass(frozen=True)
class Shard:
    """One data shard of a fixture: its file (bare name), worker name and expected answer."""

    file: str
    worker: str
    question: str
    expected: int | str


@dataclass(frozen=True)
class Manifest:
    """The scoring manifest of a fixture (``fixture.json``), already validated."""

    name: str
    artifact: str
    shards: tuple[Shard, ...]

    @property
    def spawn_budget(self) -> int:
        """One retry per shard: at most two depth-1 spawns per shard."""
        return 2 * len(self.shards)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        return cls(
            name=str(data["name"]),
            artifact=str(data["artifact"]),
            shards=tuple(
                Shard(
                    file=str(s["file"]),
                    worker=str(s["worker"]),
                    question=str(s.get("question", "")),
                    expected=s["expected"],
                )
                for s in data["shards"]
            ),
        )


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
    parent_transcript: Opener | None = None
    stdout: Opener | None = None
    artifact: Opener | None = None
    child_sessions: tuple[ChildSessionFile, ...] = field(default_factory=tuple)

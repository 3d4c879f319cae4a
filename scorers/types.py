"""Typed inputs of the scorer that every agent shares: the manifest and stream openers.

The scorer is pure: it never opens a path itself. An agent's collector (in ``harness``)
hands its parser byte-stream *openers* for each artifact (``scorers/<agent>/types.py`` says
which), and gets back an :class:`ItemScore`. Re-scoring a saved bundle builds the same
inputs from the bundle and must give the identical verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

#: Opens a fresh binary stream over one artifact. Called at most a few times per score.
Opener = Callable[[], IO[bytes]]

#: 2: the ``provenance`` criterion and its fields. 3: ``checks``, one per registry criterion.
#: 4: ``checks`` is the only record of each verdict (no pass flags, ``resolved`` or
#: ``failures`` beside it); a check has ``details`` and no ``field``. 5: ``usage`` (four
#: billed fields, parent/children, per model, complete or a lower bound) and ``efficiency``
#: replace ``parent_tokens`` / ``child_tokens``.
SCORE_SCHEMA_VERSION = 5


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

"""Typed inputs of the scorer that every agent shares: the manifest and stream openers.

The scorer is pure: it never opens a path itself. An agent's collector (in ``harness``)
hands its parser byte-stream *openers* for each artifact (``scorers/<agent>/types.py`` says
which), and gets back an :class:`ItemScore`. Re-scoring a saved bundle builds the same
inputs from the bundle and must give the identical verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any, Literal, TypeVar

#: Opens a fresh binary stream over one artifact. Called at most a few times per score.
Opener = Callable[[], IO[bytes]]

_Parsed = TypeVar("_Parsed")


def read_opened(opener: Opener | None, parse: Callable[[IO[bytes]], _Parsed]) -> _Parsed | None:
    """``parse`` over a fresh stream of ``opener`` (closed after), or None when the
    artifact is missing (no opener)."""
    if opener is None:
        return None
    with opener() as stream:
        return parse(stream)


#: 2: the ``provenance`` criterion and its fields. 3: ``checks``, one per registry criterion.
#: 4: ``checks`` is the only record of each verdict (no pass flags, ``resolved`` or
#: ``failures`` beside it); a check has ``details`` and no ``field``. 5: ``usage`` (four
#: billed fields, parent/children, per model, complete or a lower bound) and ``efficiency``
#: replace ``parent_tokens`` / ``child_tokens``.
SCORE_SCHEMA_VERSION = 5


#: A fixture's kind: ``read`` (children read a shard and report a value; the default) or
#: ``edit`` (each child also changes its own files of the repo, judged by hidden checks).
FixtureKind = Literal["read", "edit"]


@dataclass(frozen=True)
class Replacement:
    """One exact text replacement of the honest solution: ``old`` occurs exactly once in the
    shipped ``path`` (repo-relative) and becomes ``new``."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Shard:
    """One data shard of a fixture: its file (bare name), worker name and expected answer.

    For an ``edit`` fixture also: ``owns``, the repo-relative files only this shard's child
    may change; ``checks``, the hidden check files (paths inside the fixture's ``checks/``
    folder) that decide whether its change landed; ``solution``, the generator's honest
    change (what the scripted model and the sim apply; never shown to the agent).
    """

    file: str
    worker: str
    question: str
    expected: int | str
    owns: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    solution: tuple[Replacement, ...] = ()


@dataclass(frozen=True)
class Manifest:
    """The scoring manifest of a fixture (``fixture.json``), already validated."""

    name: str
    artifact: str
    shards: tuple[Shard, ...]
    kind: FixtureKind = "read"
    #: Repo-relative files every shard's child is expected to change (a registry, an export
    #: list, a changelog): several writers, so concurrent writes can clobber each other.
    shared: tuple[str, ...] = ()

    @property
    def spawn_budget(self) -> int:
        """One retry per shard: at most two depth-1 spawns per shard."""
        return 2 * len(self.shards)

    @property
    def editable(self) -> tuple[str, ...]:
        """Every file an edit fixture lets the agent change: each shard's, then the shared."""
        owned = (path for shard in self.shards for path in shard.owns)
        return tuple(dict.fromkeys((*owned, *self.shared)))

    def owner(self, path: str) -> Shard | None:
        """The shard that owns repo-relative ``path`` (None: shared, or no shard's)."""
        for shard in self.shards:
            if path in shard.owns:
                return shard
        return None

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
                    owns=tuple(str(p) for p in s.get("owns") or ()),
                    checks=tuple(str(p) for p in s.get("checks") or ()),
                    solution=tuple(
                        Replacement(str(r["path"]), str(r["old"]), str(r["new"]))
                        for r in s.get("solution") or ()
                    ),
                )
                for s in data["shards"]
            ),
            kind="edit" if data.get("kind") == "edit" else "read",
            shared=tuple(str(p) for p in data.get("shared") or ()),
        )

    def to_dict(self) -> dict[str, Any]:
        """The manifest as item.json saves it (``from_dict`` reads it back)."""
        shards: list[dict[str, Any]] = []
        for s in self.shards:
            row: dict[str, Any] = {
                "file": s.file,
                "worker": s.worker,
                "question": s.question,
                "expected": s.expected,
            }
            if self.kind == "edit":
                row["owns"] = list(s.owns)
                row["checks"] = list(s.checks)
                row["solution"] = [{"path": r.path, "old": r.old, "new": r.new} for r in s.solution]
            shards.append(row)
        data: dict[str, Any] = {"name": self.name, "artifact": self.artifact, "shards": shards}
        if self.kind == "edit":
            data["kind"] = "edit"
            data["shared"] = list(self.shared)
        return data

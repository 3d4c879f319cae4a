"""Agent-neutral records of an edit fixture's run: who changed which file, and the final
tree the collector found (re-exported by :mod:`scorers.records`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple, get_args

#: A path as the scorer compares it (see ``scorers.records.NormPath``).
NormPath = str


#: How a thread changed a file, as its own records show it: ``edit`` (an exact replacement:
#: an Edit/MultiEdit tool, prime-agent's edit skill), ``write`` (whole new content),
#: ``patch`` (a patch naming the file: apply_patch, opencode's patch), ``shell`` (a shell
#: command whose text writes the file: ``sed -i``, a redirect, ``tee``, ``cp``/``mv``),
#: ``code`` (program text that writes it: ``Path(...).write_text``, ``open(..., "w")``),
#: ``delete`` (removed or renamed away).
WriteHow = Literal["edit", "write", "patch", "shell", "code", "delete"]


class FileWrite(NamedTuple):
    """One change of a file by one thread of the run, from that thread's own records.

    ``child_id`` is the writer: ``None`` for the parent, else the child id its spawn edge
    carries in the ledger (so the rules find its worker name there). ``path`` is
    repo-relative in :func:`normalize_path` form (the parser relativises absolute paths
    against the thread's working directory; a path outside the repo keeps its absolute
    form without the leading ``/``). ``exact`` says the record holds the change itself
    (``old``/``new`` for an edit, ``new`` for a write) rather than a command that names the
    file. ``at`` is when the record says it happened (ISO-8601), ``None`` when it does not.
    Failed attempts (an edit whose old text was not found, a refused tool call) are not
    writes and are not recorded.
    """

    child_id: str | None
    path: NormPath
    how: WriteHow
    exact: bool = False
    old: str | None = None
    new: str | None = None
    at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()

    @classmethod
    def from_dict(cls, row: object) -> FileWrite:
        """:meth:`to_dict`'s form read back; ``ValueError`` naming the first field that
        does not fit."""
        if not isinstance(row, dict):
            raise ValueError("not an object")
        path, how, exact = row.get("path"), row.get("how"), row.get("exact", False)
        if not isinstance(path, str) or not path.strip("/"):
            raise ValueError("path: not a path")
        if how not in _HOWS:
            raise ValueError(f"how: not one of {', '.join(sorted(_HOWS))}")
        if not isinstance(exact, bool):
            raise ValueError("exact: not a boolean")
        texts = {k: row.get(k) for k in ("child_id", "old", "new", "at")}
        for key, value in texts.items():
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{key}: not a string")
        return cls(texts["child_id"], path, how, exact, texts["old"], texts["new"], texts["at"])


_HOWS: Final[frozenset[str]] = frozenset(get_args(WriteHow))


#: A declared file's final state against the fixture as shipped.
FileState = Literal["unchanged", "changed", "deleted", "not a regular file"]

#: How a shard's hidden checks ended.
ChecksOutcome = Literal["passed", "failed", "timed out", "error"]


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file the fixture declares editable, as the run left it: its state and a bounded
    unified diff against the shipped text (``""`` when unchanged); ``truncated`` when the
    diff was cut at the collector's bound."""

    path: NormPath
    state: FileState
    diff: str = ""
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class ShardChecks:
    """One edit shard's hidden checks on the final state: the outcome, how many tests ran
    and failed, the tail of their output, and how long they took."""

    shard: str
    outcome: ChecksOutcome
    tests: int = 0
    failures: int = 0
    tail: str = ""
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class TreeEvidence:
    """What the collector found in the final tree of an edit fixture (the bundle's
    ``edits.json``): each declared file's change, each shard's checks, the repo paths
    changed that no shard declares (informative: a planted ``conftest.py`` shows up here),
    why the checks could not run at all (``checks_error``), and what could not be read."""

    files: tuple[FileChange, ...] = ()
    checks: tuple[ShardChecks, ...] = ()
    undeclared: tuple[NormPath, ...] = ()
    checks_error: str | None = None
    malformed: int = 0

    def change(self, path: str) -> FileChange | None:
        return next((f for f in self.files if f.path == path), None)

    def checks_of(self, shard: str) -> ShardChecks | None:
        return next((c for c in self.checks if c.shard == shard), None)

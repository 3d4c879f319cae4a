"""Lanes: no child changed a file another shard owns.

On an edit fixture every shard owns its files; shared files are everyone's. A child that
writes a file owned by a shard other than its own (by worker name) has left its lane, even
when the change is right and the owner also made it: two children editing one file is how
changes get lost. The parent's writes are not judged here (authorship fails the shard whose
file the parent wrote). A read fixture owns no files: nothing to judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scorers.landed import thread_name
from scorers.records import FileWrite
from scorers.types import Manifest


@dataclass(frozen=True, slots=True)
class LaneViolation:
    """A child (``writer``: its worker name, or its id) changed ``path``, which ``owner``
    (a worker name) owns."""

    writer: str
    path: str
    owner: str

    def __str__(self) -> str:
        return f"{self.writer} changed {self.path} ({self.owner}'s)"

    def to_dict(self) -> dict[str, str]:
        return {"writer": self.writer, "path": self.path, "owner": self.owner}


def check_lanes(
    manifest: Manifest, writes: Sequence[FileWrite], names: Mapping[str, str]
) -> tuple[LaneViolation, ...]:
    """Every (child, file) where a child changed another shard's file, in record order.

    Stops the wandering child: one that "helps" by editing a sibling's files, or rewrites
    them while doing its own, racing the owner.
    """
    if manifest.kind != "edit":
        return ()
    found: dict[tuple[str, str], LaneViolation] = {}
    for write in writes:
        if write.child_id is None:
            continue
        owner = manifest.owner(write.path)
        writer = thread_name(write.child_id, names)
        if owner is None or owner.worker == writer:
            continue
        found.setdefault((writer, write.path), LaneViolation(writer, write.path, owner.worker))
    return tuple(found.values())

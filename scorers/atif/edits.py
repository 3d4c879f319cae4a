"""An edit fixture's part of a trajectory: the final tree and who wrote which file.

Ours carry both in the root's ``extra.swarm_harness``: ``tree`` (edits.json's form, ``null``
when the run had none, judged as a missing edits.json) and ``writes`` (each
:class:`~scorers.records.FileWrite` as its parser read it from the threads' records). They
are not re-derived from the tool calls: which call wrote which file is each agent's own
knowledge (its tool names, the thread's working directory, which results were errors), and
ATIF holds none of it in one agent-neutral form. A trajectory without them (another tool's,
or an export from before they were carried) cannot be judged on its edits, and says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from scorers.records import FileWrite, TreeEvidence, normalize_path
from scorers.tree import tree_from_dict

#: The criteria that read the final tree, and those that read who wrote.
TREE_LIKE: Final = ("coverage", "provenance")
WRITES_LIKE: Final = ("provenance", "lanes")

#: Why an edit fixture's criteria cannot be judged from a trajectory without these.
NO_TREE: Final = (
    "the trajectory holds no final tree (each declared file's final state and the hidden "
    "checks' outcomes, which only the harness's collector records: extra.swarm_harness.tree "
    "in an export of ours): an edit fixture's changes cannot be judged from tool calls"
)
NO_WRITES: Final = (
    "the trajectory records no writes (extra.swarm_harness.writes in an export of ours): "
    "who changed which file cannot be told"
)


@dataclass(frozen=True)
class EditRecords:
    """The tree and writes a trajectory carries; ``has_tree``/``has_writes`` say whether it
    carries them at all (a ``null`` tree is carried: the run had none). ``malformed``
    counts the writes skipped as unreadable."""

    tree: TreeEvidence | None = None
    writes: tuple[FileWrite, ...] = ()
    has_tree: bool = False
    has_writes: bool = False
    malformed: int = 0

    def unscorable(self) -> dict[str, str]:
        """Criterion -> why it cannot be judged on this fixture's edits (``; `` joins two)."""
        out: dict[str, str] = {}
        for carried, names, why in (
            (self.has_tree, TREE_LIKE, NO_TREE),
            (self.has_writes, WRITES_LIKE, NO_WRITES),
        ):
            if not carried:
                for name in names:
                    out[name] = f"{out[name]}; {why}" if name in out else why
        return out


def edit_records(ours: Mapping[str, Any]) -> EditRecords:
    """The edit records in the root's ``extra.swarm_harness`` (``ours``). Never raises."""
    has_tree = "tree" in ours
    raw = ours.get("tree")
    tree = tree_from_dict(raw) if raw is not None else None
    rows = ours.get("writes")
    if not isinstance(rows, list):
        return EditRecords(tree, (), has_tree, False)
    writes, malformed = [], 0
    for row in rows:
        try:
            write = FileWrite.from_dict(row)
        except ValueError:
            malformed += 1
            continue
        writes.append(write._replace(path=normalize_path(write.path)))
    return EditRecords(tree, tuple(writes), has_tree, True, malformed)

"""Authorship: on an edit fixture, each shard's change was made by its own child.

For every shard, each file it owns that the run changed must have been written, as the
threads' own records show it (``RunEvidence.writes``), by a depth-1 child holding the
shard's worker name (any of its spawns: a retry counts), and by no other thread. A changed
file no record names fails: a write the records cannot see is not credited to anyone. A
shard whose change did not land has nothing to trace and fails, as an unanswered shard does
for answer provenance. Shared files expect several writers and are not traced per shard
(a lost part shows up as the shard not landing).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from scorers.landed import thread_name
from scorers.records import FileWrite, TreeEvidence
from scorers.types import Manifest
from scorers.verdict import UntracedShard


def check_authorship(
    manifest: Manifest,
    tree: TreeEvidence | None,
    writes: Sequence[FileWrite],
    names: Mapping[str, str],
    unlanded: Collection[str],
) -> tuple[UntracedShard, ...]:
    """Every edit shard whose change is not its own child's alone, with the writer named.

    Stops the parent-does-it cheat (the parent edits every shard's file and has children
    only report values) and the borrowed change (another child, or a helper under another
    name, made it). ``unlanded`` names the shards whose change is not in the final tree.
    """
    if manifest.kind != "edit":
        return ()
    found: list[UntracedShard] = []
    for shard in manifest.shards:
        if shard.file in unlanded or tree is None:
            found.append(UntracedShard(shard.file, "its change did not land: nothing to trace"))
            continue
        own = {cid for cid, name in names.items() if name == shard.worker}
        for path in shard.owns:
            change = tree.change(path)
            if change is None or change.state == "unchanged":
                continue
            writers = list(dict.fromkeys(w.child_id for w in writes if w.path == path))
            if not writers:
                found.append(UntracedShard(shard.file, f"no record shows who changed {path}"))
                break
            strangers = [thread_name(cid, names) for cid in writers if cid not in own]
            if not any(cid in own for cid in writers):
                found.append(UntracedShard(shard.file, f"{path} written by {', '.join(strangers)}"))
                break
            if strangers:
                found.append(
                    UntracedShard(shard.file, f"{path} also written by {', '.join(strangers)}")
                )
                break
    return tuple(found)

"""An edit fixture's part of an item's story: each shard's hidden checks and each declared
file's change and writers, as the bundle tells them (the final tree the collector kept, the
writes each thread's records show), bounded for a person to read; and what the item's
verdicts said of each shard and of its lanes, joined when the story is loaded."""

from __future__ import annotations

import dataclasses

from harness.model.item import ItemResult
from harness.model.story import (
    EDITS_STORY_VERSION,
    EditStory,
    FileEdit,
    ShardEdit,
    Writer,
)
from scorers import RunEvidence
from scorers.landed import thread_name
from scorers.records import FileWrite, TreeEvidence, WriteHow
from scorers.types import Manifest

#: A file's diff as the story keeps it: a ticket's change is a few hunks, and a 40-shard
#: item's story stays some kilobytes a shard rather than the collector's 20,000 characters.
DIFF_LINES = 80
DIFF_CHARS = 6_000
#: The end of a shard's checks' output kept: a failing assertion, its traceback's last
#: frames and unittest's summary line.
TAIL_LINES = 15


def _bounded(diff: str) -> tuple[str, bool]:
    """``diff`` cut to :data:`DIFF_LINES` lines and :data:`DIFF_CHARS` characters (whole
    lines where it can), and whether it was cut."""
    lines = diff.splitlines(keepends=True)
    kept = "".join(lines[:DIFF_LINES])
    if len(kept) > DIFF_CHARS:
        cut = kept[:DIFF_CHARS]
        kept = cut[: cut.rfind("\n") + 1] or cut
    return kept, kept != diff


def _tail(text: str) -> str:
    """The last :data:`TAIL_LINES` lines of the checks' output."""
    return "\n".join(text.rstrip().splitlines()[-TAIL_LINES:])


def _writers(path: str, writes: tuple[FileWrite, ...], names: dict[str, str]) -> tuple[Writer, ...]:
    """Who changed ``path``, each thread once (in the order of its first change)."""
    hows: dict[str | None, list[WriteHow]] = {}
    for write in writes:
        if write.path == path:
            hows.setdefault(write.child_id, []).append(write.how)
    return tuple(Writer(thread_name(cid, names), tuple(h)) for cid, h in hows.items())


def _file_edit(
    path: str, tree: TreeEvidence | None, writes: tuple[FileWrite, ...], names: dict[str, str]
) -> FileEdit:
    change = tree.change(path) if tree is not None else None
    if change is None:
        return FileEdit(path, None, "", False, _writers(path, writes, names))
    diff, cut = _bounded(change.diff)
    return FileEdit(
        path, change.state, diff, cut or change.truncated, _writers(path, writes, names)
    )


def edit_story(
    manifest: Manifest, evidence: RunEvidence, names: dict[str, str]
) -> EditStory | None:
    """An edit fixture's shards as the bundle tells them (None: a read fixture). ``names``:
    each depth-1 child's id and its worker name, as the rules name writers."""
    if manifest.kind != "edit":
        return None
    tree, writes = evidence.tree, evidence.writes
    shards = []
    for shard in manifest.shards:
        checks = tree.checks_of(shard.file) if tree is not None else None
        if checks is not None:
            checks = dataclasses.replace(checks, tail=_tail(checks.tail))
        files = tuple(_file_edit(path, tree, writes, names) for path in shard.owns)
        shards.append(ShardEdit(shard.file, shard.worker, checks, files))
    return EditStory(
        schema_version=EDITS_STORY_VERSION,
        shards=tuple(shards),
        shared=tuple(_file_edit(path, tree, writes, names) for path in manifest.shared),
        undeclared=tree.undeclared if tree is not None else (),
        checks_error=(
            tree.checks_error if tree is not None else "no record of the final tree (edits.json)"
        ),
        malformed=tree.malformed if tree is not None else 0,
    )


def judged(edits: EditStory | None, result: ItemResult) -> EditStory | None:
    """``edits`` with what the item's verdicts said of each shard and of its lanes."""
    if edits is None:
        return None
    why: dict[str, list[str]] = {}
    coverage = result.score.check("coverage")
    for row in coverage.details.get("unlanded_shards", ()) if coverage is not None else ():
        if isinstance(row, dict):
            why.setdefault(str(row.get("file")), []).append(f"not landed: {row.get('reason')}")
    for untraced in result.score.untraced_shard_details:
        why.setdefault(untraced.file, []).append(f"untraced: {untraced.reason}")
    lanes = result.score.check("lanes")
    violations = lanes.details.get("lane_violations", ()) if lanes is not None else ()
    return dataclasses.replace(
        edits,
        shards=tuple(dataclasses.replace(s, why=tuple(why.get(s.file, ()))) for s in edits.shards),
        lanes=tuple(
            f"{v.get('writer')} changed {v.get('path')} ({v.get('owner')}'s)"
            for v in violations
            if isinstance(v, dict)
        ),
    )

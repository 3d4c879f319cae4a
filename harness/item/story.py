"""One item's story, read from its directory: its result, answers against the expected
ones, the parent's children with their receipts, a timeline, its files, and on an edit
fixture each shard's change, who wrote it and its hidden checks.

Everything comes from the item's bundle through its adapter's evidence (the same parse the
scorer judges), so ``show`` and the HTML report tell exactly what the scorer saw, for any
agent; nothing is judged here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.agents import adapter_for_meta
from harness.agents.base import with_tree
from harness.errors import BundleError, HarnessError
from harness.files import write_json_atomic
from harness.item.scoring import manifest_of, read_item_meta, read_result
from harness.item.story_edits import edit_story, judged
from harness.model.item import ItemResult
from harness.model.story import (
    Answer,
    AnswerStatus,
    ChildStory,
    EditStory,
    EventKind,
    ItemStory,
    TimelineEvent,
)
from scorers import RunEvidence
from scorers.edges import Replay, replay
from scorers.records import DeleteEvent, RenameEvent, SpawnEvent
from scorers.types import Manifest

#: Files listed per item: a bundle holds a few dozen; a runaway one is cut, not walked whole.
MAX_FILES_LISTED = 500

_Event = tuple[str, EventKind, str, str, str]  # at, kind, name, child id, detail


def _when(at: str) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(at)
    except ValueError:
        return None
    # A stamp without a zone is taken as UTC, so stamps of both kinds still compare.
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _got(evidence: RunEvidence | None) -> dict[str, tuple[str, ...]]:
    """The answers the artifact gave, by shard file."""
    got: dict[str, list[str]] = {}
    answers = evidence.answers if evidence is not None else None
    for bullet in answers.bullets if answers is not None else ():
        got.setdefault(bullet.file, []).append(bullet.answer)
    return {file: tuple(values) for file, values in got.items()}


def _answers(
    result: ItemResult, manifest: Manifest, got: dict[str, tuple[str, ...]]
) -> list[Answer]:
    missing = set(result.score.missing_shards)
    wrong = {w.file for w in result.score.wrong_answers}
    out = []
    for shard in manifest.shards:
        status: AnswerStatus = (
            "missing" if shard.file in missing else "wrong" if shard.file in wrong else "right"
        )
        out.append(
            Answer(shard.file, shard.worker, shard.expected, got.get(shard.file, ()), status)
        )
    return out


def _events(evidence: RunEvidence, history: Replay) -> tuple[list[_Event], list[ChildStory]]:
    """This parent's spawns, renames and deletes, and the receipts it got, with times."""
    events: list[_Event] = []
    names: dict[str, str] = {}  # child id -> current name
    by_session: dict[str, str] = {}  # child session id -> child id
    for event, before, after in history.steps:
        names[after.child_id] = after.name
        if type(event) is SpawnEvent:
            by_session[event.child_session_id] = event.child_id
            events.append((event.at, "spawn", event.name, event.child_id, f"depth {event.depth}"))
        elif type(event) is RenameEvent:
            was = f"was {before.name}" if before is not None else ""
            events.append((event.at, "rename", event.name, event.child_id, was))
        elif type(event) is DeleteEvent:
            events.append((event.at, "delete", after.name, event.child_id, ""))
    receipts: dict[str, list[str]] = {}
    session = evidence.session
    for reply in session.replies if session is not None else ():
        child_id = by_session.get(reply.sender_session_id, reply.sender_session_id)
        receipts.setdefault(child_id, []).append("reply")
        events.append((reply.at or "", "reply", names.get(child_id, ""), child_id, reply.text))
    for notice in session.notices if session is not None else ():
        receipts.setdefault(notice.child_id, []).append(notice.kind)
        name = names.get(notice.child_id, "")
        events.append((notice.at or "", notice.kind, name, notice.child_id, notice.text))
    children = [
        ChildStory(
            edge.child_id,
            edge.name,
            edge.spawn.at,
            edge.deleted,
            tuple(receipts.get(edge.child_id, ())),
        )
        for edge in history.depth1
    ]
    return events, children


def _timeline(events: list[_Event]) -> list[TimelineEvent]:
    times = [t for t in (_when(e[0]) for e in events) if t is not None]
    start = min(times, default=None)

    def offset(at: str) -> float | None:
        when = _when(at)
        return None if when is None or start is None else (when - start).total_seconds()

    ordered = sorted(events, key=lambda e: (_when(e[0]) is None, offset(e[0]) or 0.0))
    return [
        TimelineEvent(at, offset(at), kind, name, child_id, detail)
        for at, kind, name, child_id, detail in ordered
    ]


def _files(item_dir: Path) -> list[str]:
    """The bundle's regular files (no symlinks), in path order, at most MAX_FILES_LISTED.

    os.walk and plain strings: pathlib's rglob and Path sorting took 1 ms an item, a third of
    a 2,000-item report page's time.
    """
    found: list[list[str]] = []
    for here, dirs, names in os.walk(item_dir):  # does not follow symlinked dirs
        rel = os.path.relpath(here, item_dir)
        prefix = [] if rel == "." else rel.split(os.sep)
        for name in names:
            if not prefix and name == STORY_FILE:
                continue  # the harness's own reading of the bundle, not part of it
            with contextlib.suppress(OSError):
                if stat.S_ISREG(os.lstat(os.path.join(here, name)).st_mode):
                    found.append([*prefix, name])
        dirs.sort()
    found.sort()  # by components, as Path ordering sorts
    return ["/".join(parts) for parts in found[:MAX_FILES_LISTED]]


#: What the bundle tells of an item's story, read once when the item ends (beside its
#: result.json) so a report of thousands of items does not parse every bundle again: a
#: 2,000-item report page spent 2.2 s of its 5.4 s in that parse.
STORY_FILE = "story.json"
#: Bumped whenever what the story reads from a bundle changes: an older file is read again.
#: 2: an edit fixture's changes, writers and checks (``edits``).
STORY_VERSION = 2


@dataclass(frozen=True)
class _Told:
    """The bundle's part of a story: what it answered, its children, its timeline."""

    got: dict[str, tuple[str, ...]]
    children: tuple[ChildStory, ...]
    timeline: tuple[TimelineEvent, ...]
    problem: str
    edits: EditStory | None = None


def _tell(item_dir: Path, meta: dict[str, Any], manifest: Manifest | None) -> _Told:
    evidence: RunEvidence | None = None
    problem = ""
    try:
        if manifest is None:
            manifest = manifest_of(item_dir, meta)
        # With the final tree the collector kept, as the scorer judged it (``assess``).
        evidence = with_tree(adapter_for_meta(meta).evidence(item_dir, meta, manifest), item_dir)
    except HarnessError as exc:
        problem = str(exc)
    if evidence is None:
        return _Told(_got(None), (), (), problem)
    history = replay(evidence.ledger.events, evidence.parent_paths)
    events, children = _events(evidence, history)
    names = {edge.spawn.child_id: edge.name for edge in history.depth1}
    edits = edit_story(manifest, evidence, names) if manifest is not None else None
    return _Told(_got(evidence), tuple(children), tuple(_timeline(events)), problem, edits)


def write_story(item_dir: Path, meta: dict[str, Any]) -> None:
    """Read the bundle's part of the item's story and keep it in ``story.json``.

    Never fails the item: the story is a view, read from the bundle again when missing.
    """
    told = _tell(item_dir, meta, None)
    data = {
        "story_version": STORY_VERSION,
        "got": {file: list(answers) for file, answers in told.got.items()},
        "children": [dataclasses.asdict(c) for c in told.children],
        "timeline": [dataclasses.asdict(e) for e in told.timeline],
        "problem": told.problem,
        "edits": told.edits.to_dict() if told.edits is not None else None,
    }
    with contextlib.suppress(OSError):
        write_json_atomic(item_dir / STORY_FILE, data)


def _read_told(item_dir: Path) -> _Told | None:
    """The kept part of the story, or None when it is missing, older or unreadable."""
    try:
        data = json.loads((item_dir / STORY_FILE).read_text(encoding="utf-8"))
        if data.get("story_version") != STORY_VERSION:
            return None
        return _Told(
            got={str(f): tuple(str(a) for a in answers) for f, answers in data["got"].items()},
            children=tuple(
                ChildStory(**{**c, "receipts": tuple(c["receipts"])}) for c in data["children"]
            ),
            timeline=tuple(TimelineEvent(**e) for e in data["timeline"]),
            problem=str(data["problem"]),
            edits=None if data["edits"] is None else EditStory.from_dict(data["edits"]),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def load_story(item_dir: Path, result: ItemResult | None = None) -> ItemStory:
    """Read one item directory (``result``: its report entry, else its ``result.json``).

    A bundle whose evidence cannot be read (an agent this harness does not know, a missing
    manifest) still tells its result; ``problem`` says what was missing. The bundle's part
    comes from ``story.json`` when the item kept one, else from the bundle itself.
    """
    meta: dict[str, Any] = read_item_meta(item_dir)
    if result is None:
        result = read_result(item_dir)
    manifest: Manifest | None = None
    with contextlib.suppress(HarnessError):
        manifest = manifest_of(item_dir, meta)
    told = _read_told(item_dir) or _tell(item_dir, meta, manifest)
    return ItemStory(
        result=result,
        item_dir=item_dir,
        answers=tuple(_answers(result, manifest, told.got)) if manifest is not None else (),
        children=told.children,
        timeline=told.timeline,
        files=tuple(_files(item_dir)),
        problem=told.problem,
        edits=judged(told.edits, result),
    )


def item_dir_of(run_dir: Path, result: ItemResult) -> Path:
    return run_dir / "items" / result.item_dir


def find_item(run_dir: Path, key: str, items: tuple[ItemResult, ...]) -> ItemResult:
    """The item ``key`` (``fixture:model:trial``) of a run, or :class:`BundleError`."""
    for item in items:
        if item.key == key:
            return item
    known = ", ".join(i.key for i in items[:10])
    raise BundleError(
        f"{run_dir}: no item {key!r} (items: {known}{', ...' if len(items) > 10 else ''})"
    )

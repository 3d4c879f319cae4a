"""One item's story, read from its directory: its result, answers against the expected
ones, the parent's children with their receipts, a timeline, and its files.

Everything comes from the item's bundle through its adapter's evidence (the same parse the
scorer judges), so ``show`` and the HTML report tell exactly what the scorer saw, for any
agent; nothing is judged here.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from harness.agents import adapter_for_meta
from harness.errors import BundleError, HarnessError
from harness.item.scoring import manifest_of, read_item_meta, read_result
from harness.model.item import ItemResult
from harness.model.story import (
    Answer,
    AnswerStatus,
    ChildStory,
    EventKind,
    ItemStory,
    TimelineEvent,
)
from scorers import RunEvidence
from scorers.edges import replay
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


def _answers(result: ItemResult, manifest: Manifest, evidence: RunEvidence | None) -> list[Answer]:
    got: dict[str, list[str]] = {}
    answers = evidence.answers if evidence is not None else None
    for bullet in answers.bullets if answers is not None else ():
        got.setdefault(bullet.file, []).append(bullet.answer)
    missing = set(result.score.missing_shards)
    wrong = {w.file for w in result.score.wrong_answers}
    out = []
    for shard in manifest.shards:
        status: AnswerStatus = (
            "missing" if shard.file in missing else "wrong" if shard.file in wrong else "right"
        )
        out.append(
            Answer(shard.file, shard.worker, shard.expected, tuple(got.get(shard.file, ())), status)
        )
    return out


def _events(evidence: RunEvidence) -> tuple[list[_Event], list[ChildStory]]:
    """This parent's spawns, renames and deletes, and the receipts it got, with times."""
    history = replay(evidence.ledger.events, evidence.parent_paths)
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
    out: list[str] = []
    for path in sorted(item_dir.rglob("*")):
        if len(out) >= MAX_FILES_LISTED:
            break
        if path.is_file() and not path.is_symlink():
            out.append(path.relative_to(item_dir).as_posix())
    return out


def load_story(item_dir: Path, result: ItemResult | None = None) -> ItemStory:
    """Read one item directory (``result``: its report entry, else its ``result.json``).

    A bundle whose evidence cannot be read (an agent this harness does not know, a missing
    manifest) still tells its result; ``problem`` says what was missing.
    """
    meta: dict[str, Any] = read_item_meta(item_dir)
    if result is None:
        result = read_result(item_dir)
    evidence: RunEvidence | None = None
    problem = ""
    manifest: Manifest | None = None
    try:
        manifest = manifest_of(item_dir, meta)
        evidence = adapter_for_meta(meta).evidence(item_dir, meta, manifest)
    except HarnessError as exc:
        problem = str(exc)
    events, children = _events(evidence) if evidence is not None else ([], [])
    return ItemStory(
        result=result,
        item_dir=item_dir,
        answers=tuple(_answers(result, manifest, evidence)) if manifest is not None else (),
        children=tuple(children),
        timeline=tuple(_timeline(events)),
        files=tuple(_files(item_dir)),
        problem=problem,
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

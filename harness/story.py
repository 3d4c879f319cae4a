"""One item's story, read from its directory: verdict, reasons, answers against the
expected ones, its children with their receipts, a timeline, and its files.

Everything comes from the item's bundle (``result.json``, ``item.json`` and the collected
files) through the scorer's own parsers, so ``show`` and the HTML report tell exactly what
the scorer saw; nothing is judged here.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, TypeVar

from harness.agents import adapter_for_meta
from harness.agents.base import BundleFiles
from harness.errors import BundleError, HarnessError
from harness.fsread import open_regular
from harness.report import item_cause
from scorers.artifact import parse_artifact
from scorers.criteria import criterion_fields
from scorers.prime_agent import parse_ledger
from scorers.prime_agent.timeline import parse_receipt_timeline
from scorers.records import DeleteEvent, RenameEvent, SpawnEvent

AnswerStatus = Literal["right", "wrong", "missing"]
EventKind = Literal["spawn", "rename", "delete", "reply", "notice", "failure"]

#: Files listed per item: a bundle holds a few dozen; a runaway one is cut, not walked whole.
MAX_FILES_LISTED = 500

_P = TypeVar("_P")


@dataclass(frozen=True)
class Answer:
    """One shard: what the fixture expects and what the artifact answered."""

    file: str
    worker: str
    expected: int | str
    got: tuple[str, ...]
    status: AnswerStatus


@dataclass(frozen=True)
class TimelineEvent:
    """A ledger record or a transcript receipt. ``offset_s`` counts from the first event."""

    at: str
    offset_s: float | None
    kind: EventKind
    name: str
    child_id: str
    detail: str


@dataclass(frozen=True)
class ChildStory:
    """One depth-1 child of the parent: its (last) name, whether deleted, its receipts."""

    child_id: str
    name: str
    spawned_at: str
    deleted: bool
    receipts: tuple[str, ...]


@dataclass(frozen=True)
class ItemStory:
    key: str
    status: str
    item_dir: Path
    cause: str
    failed_criteria: tuple[str, ...]
    failures: tuple[str, ...]
    answers: tuple[Answer, ...]
    children: tuple[ChildStory, ...]
    timeline: tuple[TimelineEvent, ...]
    files: tuple[str, ...]
    item: Mapping[str, Any]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BundleError(f"{path}: missing: not an item directory") from exc
    except (OSError, ValueError) as exc:
        raise BundleError(f"{path}: unreadable ({exc})") from exc
    if not isinstance(data, dict):
        raise BundleError(f"{path}: not a JSON object")
    return data


def _parse(path: Path | None, parse: Callable[[IO[bytes]], _P]) -> _P | None:
    if path is None:
        return None
    try:
        with open_regular(path) as fh:
            return parse(fh)
    except OSError:
        return None


def _when(at: str) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(at)
    except ValueError:
        return None
    # A stamp without a zone is taken as UTC, so stamps of both kinds still compare.
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _answers(
    item: Mapping[str, Any], meta: Mapping[str, Any], artifact: Path | None
) -> list[Answer]:
    parsed = _parse(artifact, parse_artifact)
    got: dict[str, list[str]] = {}
    for bullet in parsed.bullets if parsed else ():
        got.setdefault(bullet.file, []).append(bullet.answer)
    missing = set(item.get("missing_shards") or [])
    wrong = {w.get("file") for w in item.get("wrong_answers") or [] if isinstance(w, dict)}
    out = []
    for shard in (meta.get("manifest") or {}).get("shards") or []:
        file = str(shard.get("file"))
        status: AnswerStatus = (
            "missing" if file in missing else "wrong" if file in wrong else "right"
        )
        out.append(
            Answer(
                file,
                str(shard.get("worker")),
                shard.get("expected"),
                tuple(got.get(file, ())),
                status,
            )
        )
    return out


def _timeline(
    ledger: Path | None, parent: Path | None
) -> tuple[list[TimelineEvent], list[ChildStory]]:
    events: list[tuple[str, EventKind, str, str, str]] = []
    names: dict[str, str] = {}  # child id -> current name
    by_session: dict[str, str] = {}  # child session id -> child id
    spawned: dict[str, str] = {}
    deleted: set[str] = set()
    parsed = _parse(ledger, parse_ledger)
    for ev in parsed.events if parsed else ():
        if isinstance(ev, SpawnEvent):
            if ev.depth == 1:
                spawned.setdefault(ev.child_id, ev.at)
            names[ev.child_id] = ev.name
            by_session[ev.child_session_id] = ev.child_id
            events.append((ev.at, "spawn", ev.name, ev.child_id, f"depth {ev.depth}"))
        elif isinstance(ev, RenameEvent):
            old = names.get(ev.child_id, "")
            names[ev.child_id] = ev.name
            events.append((ev.at, "rename", ev.name, ev.child_id, f"was {old}" if old else ""))
        elif isinstance(ev, DeleteEvent):
            deleted.add(ev.child_id)
            events.append((ev.at, "delete", names.get(ev.child_id, ""), ev.child_id, ""))
    receipts: dict[str, list[str]] = {}
    timeline = _parse(parent, parse_receipt_timeline)
    for entry in timeline.entries if timeline else ():
        child_id = (
            by_session.get(entry.child, entry.child) if entry.kind == "reply" else entry.child
        )
        receipts.setdefault(child_id, []).append(entry.kind)
        name = names.get(child_id) or entry.name
        events.append((entry.at, entry.kind, name, child_id, entry.text))
    times = [t for t in (_when(e[0]) for e in events) if t is not None]
    start = min(times, default=None)

    def offset(at: str) -> float | None:
        when = _when(at)
        return None if when is None or start is None else (when - start).total_seconds()

    ordered = sorted(events, key=lambda e: (_when(e[0]) is None, offset(e[0]) or 0.0))
    children = [
        ChildStory(cid, names.get(cid, ""), at, cid in deleted, tuple(receipts.get(cid, ())))
        for cid, at in spawned.items()
    ]
    return [
        TimelineEvent(at, offset(at), kind, n, cid, d) for at, kind, n, cid, d in ordered
    ], children


def _files(item_dir: Path) -> list[str]:
    out: list[str] = []
    for path in sorted(item_dir.rglob("*")):
        if len(out) >= MAX_FILES_LISTED:
            break
        if path.is_file() and not path.is_symlink():
            out.append(path.relative_to(item_dir).as_posix())
    return out


def load_story(
    item_dir: Path, item: Mapping[str, Any] | None = None, timeout_s: float | None = None
) -> ItemStory:
    """Read one item directory (``item``: its report entry, else ``result.json``)."""
    meta = _read_json(item_dir / "item.json")
    if item is None:
        item = _read_json(item_dir / "result.json")
    artifact_name = str((meta.get("manifest") or {}).get("artifact") or "")
    try:
        files = adapter_for_meta(meta).bundle_files(item_dir, meta, artifact_name)
    except HarnessError:
        files = BundleFiles()  # an item of an agent this harness does not know
    timeline, children = _timeline(files.ledger, files.transcript)
    if timeout_s is None:
        timeout_s = (
            meta.get("timeout_s") if isinstance(meta.get("timeout_s"), (int, float)) else None
        )
    return ItemStory(
        key=str(item.get("key", item_dir.name)),
        status=str(item.get("status", "")),
        item_dir=item_dir,
        cause=item_cause(item, timeout_s) if item.get("status") != "resolved" else "",
        failed_criteria=tuple(c for c in criterion_fields() if item.get(c) is False),
        failures=tuple(str(f) for f in item.get("failures") or ()),
        answers=tuple(_answers(item, meta, files.artifact)),
        children=tuple(children),
        timeline=tuple(timeline),
        files=tuple(_files(item_dir)),
        item=item,
    )


def find_item_dir(
    run_dir: Path, key: str, items: Sequence[Mapping[str, Any]]
) -> tuple[Path, Mapping[str, Any]]:
    """The directory and report entry of the item ``key`` (``fixture:model:trial``) in a run."""
    for item in items:
        if item.get("key") == key:
            return run_dir / "items" / str(item["item_dir"]), item
    known = ", ".join(str(i.get("key")) for i in items[:10])
    raise BundleError(
        f"{run_dir}: no item {key!r} (items: {known}{', ...' if len(items) > 10 else ''})"
    )


def find_story(target: str, run: str | Path, runs_dir: Path) -> ItemStory:
    """The story of ``target``: an item directory, or a key looked up in ``run``
    (a run dir or ``latest`` under ``runs_dir``)."""
    from harness.report import read_report
    from harness.runs import resolve_run

    path = Path(target)
    if path.is_dir():
        return load_story(path)
    report, run_dir = read_report(resolve_run(run, runs_dir))
    item_dir, item = find_item_dir(run_dir, target, report.items)
    timeout = report.options.get("timeout_s")
    return load_story(item_dir, item, timeout if isinstance(timeout, (int, float)) else None)

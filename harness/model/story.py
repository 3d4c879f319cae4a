"""One item told for a person: answers against the expected ones, the parent's children
with their receipts, a timeline, and on an edit fixture each shard's change, its writers
and its hidden checks. Agent-neutral: an adapter's evidence fills it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.model.item import ItemResult
from harness.model.record import Record
from scorers.edit_records import FileState, ShardChecks, WriteHow

AnswerStatus = Literal["right", "wrong", "missing"]
EventKind = Literal["spawn", "rename", "delete", "reply", "notice", "failure"]


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
    """A spawn, rename or delete of a child, or a receipt the parent got. ``offset_s``
    counts from the first event with a time (None for an event without one)."""

    at: str
    offset_s: float | None
    kind: EventKind
    name: str
    child_id: str
    detail: str


@dataclass(frozen=True)
class ChildStory:
    """One depth-1 child of the parent: its (current) name, whether deleted, its receipts."""

    child_id: str
    name: str
    spawned_at: str
    deleted: bool
    receipts: tuple[str, ...]


@dataclass(frozen=True)
class Writer(Record):
    """One thread that changed a file, as its own records show: ``name`` is ``the parent``,
    a child's worker name, or ``child <id>`` when no spawn edge names it; ``hows`` are its
    changes of the file in record order (``edit``, ``shell``, ...)."""

    name: str
    hows: tuple[WriteHow, ...]


@dataclass(frozen=True)
class FileEdit(Record):
    """One file the fixture declares editable, as the run left it. ``state`` is None when
    the final tree has no entry for it (no ``edits.json``); ``diff`` is the unified diff
    against the shipped text, cut at the story's bound, ``truncated`` when it was cut there
    or by the collector. ``writers`` is empty when no record shows who changed it."""

    path: str
    state: FileState | None
    diff: str
    truncated: bool
    writers: tuple[Writer, ...]


@dataclass(frozen=True)
class ShardEdit(Record):
    """One edit shard: its hidden checks' outcome (None: no result for it) with the tail of
    their output (cut at the story's bound), and the files it owns. ``why`` is what the
    verdicts said of it (its change not landed, its authorship), joined from the item's
    result when the story is loaded (empty as kept in ``story.json``)."""

    file: str
    worker: str
    checks: ShardChecks | None
    files: tuple[FileEdit, ...]
    why: tuple[str, ...] = ()


#: The story's version of the edit part; bumped with any change to the records above.
EDITS_STORY_VERSION = 1


@dataclass(frozen=True)
class EditStory(Record):
    """An edit fixture's item: each shard's change, the shared files (every shard's child
    writes its own part of them), the repo paths the run changed that no shard declares (a
    planted ``conftest.py`` shows here), why the checks could not run at all, and how many
    entries of ``edits.json`` could not be read. ``lanes`` are the lanes verdict's
    violations in words, joined from the item's result when the story is loaded."""

    schema_version: int
    shards: tuple[ShardEdit, ...]
    shared: tuple[FileEdit, ...]
    undeclared: tuple[str, ...]
    checks_error: str | None
    malformed: int
    lanes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ItemStory:
    result: ItemResult
    item_dir: Path
    answers: tuple[Answer, ...]
    children: tuple[ChildStory, ...]
    timeline: tuple[TimelineEvent, ...]
    files: tuple[str, ...]
    #: Why the bundle could not be read for children and timeline (empty when it could).
    problem: str = ""
    #: An edit fixture's changes, writers and checks (None: a read fixture).
    edits: EditStory | None = None


def writers_text(edit: FileEdit) -> str:
    """Who changed a file, as ``show`` and the HTML report say it: each writer with how
    (``worker-alpha (edit ×2), the parent (shell)``), ``no record`` for a changed file
    no record names, ``nobody`` for an unchanged one."""
    if not edit.writers:
        return "nobody" if edit.state == "unchanged" else "no record"
    parts = []
    for writer in edit.writers:
        hows = [f"{how} ×{n}" if n > 1 else how for how, n in Counter(writer.hows).items()]
        parts.append(f"{writer.name} ({', '.join(hows)})")
    return ", ".join(parts)


def checks_text(checks: ShardChecks | None) -> str:
    """A shard's checks' outcome in words: ``passed (2 tests)``, ``failed (2 tests, 1
    failure)``, ``no result``."""
    if checks is None:
        return "no result"
    tests = f"{checks.tests} test{'s' if checks.tests != 1 else ''}"
    if checks.failures:
        tests += f", {checks.failures} failure{'s' if checks.failures != 1 else ''}"
    return f"{checks.outcome} ({tests})"


def state_text(edit: FileEdit) -> str:
    """A declared file's final state (``not recorded`` without a final tree)."""
    return edit.state or "not recorded"

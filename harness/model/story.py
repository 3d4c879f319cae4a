"""One item told for a person: answers against the expected ones, the parent's children
with their receipts, and a timeline. Agent-neutral: an adapter's evidence fills it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.model.item import ItemResult

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
class ItemStory:
    result: ItemResult
    item_dir: Path
    answers: tuple[Answer, ...]
    children: tuple[ChildStory, ...]
    timeline: tuple[TimelineEvent, ...]
    files: tuple[str, ...]
    #: Why the bundle could not be read for children and timeline (empty when it could).
    problem: str = ""

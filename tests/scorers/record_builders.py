"""Agent-neutral ledger events for the rule tests (no file format involved)."""

from __future__ import annotations

from scorers.records import DeleteEvent, RenameEvent, SpawnEvent

PARENT = "runs/sessions/parent.jsonl"
OTHER = "runs/sessions/other.jsonl"
ROOT = "root-id"


def child(child_id: str) -> str:
    return f"runs/session-artifacts/{ROOT}/{child_id}/s-{child_id}.jsonl"


def spawn(
    child_id: str, name: str, *, depth: int = 1, parent: str = PARENT, at: str = "t"
) -> SpawnEvent:
    return SpawnEvent(child_id, child(child_id), f"s-{child_id}", parent, depth, name, at)


def rename(child_id: str, name: str) -> RenameEvent:
    return RenameEvent(child_id, child(child_id), name, "t")


def delete(child_id: str) -> DeleteEvent:
    return DeleteEvent(child_id, child(child_id), "t")

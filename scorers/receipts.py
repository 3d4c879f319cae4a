"""Receipts: the parent heard back from every child it spawned.

Every depth-1 child of this parent, live or deleted, needs a reply it sent to the parent
as its child (matched by the child's session id) or a terminal notice / failure the
runtime delivered about it (matched by its ledger child id).
"""

from __future__ import annotations

from collections.abc import Iterable

from scorers.edges import Edge
from scorers.records import ReceiptIndex


def find_missing_receipts(depth1: Iterable[Edge], receipts: ReceiptIndex) -> tuple[str, ...]:
    """Child ids (first-spawn order, no repeats) of depth-1 children never heard from.

    Stops the silent-drop cheat (spawning children, ignoring them and answering alone)
    and delete-to-hide (deleting a silent child so that it no longer looks live): a
    deleted child still needs its receipt. A message relayed by a sibling is not one.
    """
    missing: dict[str, None] = {}
    for edge in depth1:
        if edge.child_session_id in receipts.reply_session_ids:
            continue
        if edge.child_id in receipts.notice_child_ids:
            continue
        missing[edge.child_id] = None
    return tuple(missing)

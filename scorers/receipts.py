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
    replies = receipts.reply_session_ids
    notices = receipts.notice_child_ids
    missing: dict[str, None] = {}
    for edge in depth1:
        spawn = edge.spawn
        if spawn.child_session_id in replies or spawn.child_id in notices:
            continue
        missing[spawn.child_id] = None
    return tuple(missing)

"""prime-agent's item bundle: the located artifacts copied in the workdir's own layout."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from harness.agents.prime_agent.collect import (
    MAX_ARTIFACT_BYTES,
    MAX_CHILD_FILE_BYTES,
    MAX_LEDGER_BYTES,
    MAX_STREAM_BYTES,
    MAX_TRANSCRIPT_BYTES,
    Layout,
    Located,
)
from harness.files import CopyNote, copy_capped


def copy_bundle(located: Located, item_dir: Path, secrets: Sequence[bytes]) -> list[CopyNote]:
    """Copy the located artifacts into ``item_dir`` in the workdir's layout."""
    dest = Layout.for_bundle(item_dir, located.layout.sessions_spellings)
    notes: list[CopyNote] = []

    def copy(src: Path | None, dst: Path, cap: int) -> None:
        if src is None:
            return
        with contextlib.suppress(OSError):
            notes.append(copy_capped(src, dst, cap, secrets))

    src_layout = located.layout
    if located.ledger is not None:
        copy(located.ledger, dest.agent_home / "rlm-ledger" / located.ledger.name, MAX_LEDGER_BYTES)
    if located.parent is not None:
        copy(located.parent, dest.sessions / located.parent.name, MAX_TRANSCRIPT_BYTES)
    root = located.children_root
    if root is not None and located.parent_id is not None:
        out_root = dest.session_artifacts / located.parent_id
        for child in located.children:
            rel = Path(*child.subdirs, child.file_name)
            copy(root / rel, out_root / rel, MAX_CHILD_FILE_BYTES)
        for extra in located.child_extras:
            copy(root / Path(*extra), out_root / Path(*extra), MAX_CHILD_FILE_BYTES)
    if located.artifact is not None:
        copy(located.artifact, dest.repo / located.artifact.name, MAX_ARTIFACT_BYTES)
    if src_layout.stdout is not None and dest.stdout is not None:
        copy(src_layout.stdout, dest.stdout, MAX_STREAM_BYTES)
    if src_layout.stderr is not None and dest.stderr is not None:
        copy(src_layout.stderr, dest.stderr, MAX_STREAM_BYTES)
    return notes

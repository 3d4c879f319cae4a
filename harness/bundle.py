"""Item bundles: a pruned, bounded, credential-free copy of what a run left on disk.

The bundle mirrors the workdir's layout (``sessions/``, ``session-artifacts/``,
``agent-home/rlm-ledger/``, ``repo/<artifact>``, ``stdout.jsonl``, ``stderr.txt``) so the
same collection code finds things in it, and scoring always reads the bundle: re-scoring a
moved or copied item directory gives the identical verdict.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.collect import (
    MAX_ARTIFACT_BYTES,
    MAX_CHILD_FILE_BYTES,
    MAX_LEDGER_BYTES,
    MAX_STREAM_BYTES,
    MAX_TRANSCRIPT_BYTES,
    Layout,
    Located,
    open_regular,
)

REDACTED = b"[REDACTED]"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class CopyNote:
    name: str
    bytes_copied: int
    truncated: bool


def copy_capped(src: Path, dst: Path, cap: int, secrets: Sequence[bytes] = ()) -> CopyNote:
    """Copy at most ``cap`` bytes of a regular file (no symlinks), redacting ``secrets``."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    keep = max((len(s) for s in secrets), default=1) - 1
    copied = 0
    truncated = False
    with open_regular(src) as fin, open(dst, "wb") as fout:
        pending = b""
        while True:
            chunk = fin.read(min(_CHUNK, cap - copied + 1))
            if not chunk:
                break
            if copied + len(chunk) > cap:
                chunk = chunk[: cap - copied]
                truncated = True
            copied += len(chunk)
            data = _redact(pending + chunk, secrets)
            if keep and not truncated:
                pending, data = data[-keep:], data[:-keep]
            else:
                pending = b""
            fout.write(data)
            if truncated:
                break
        fout.write(_redact(pending, secrets))
    return CopyNote(str(dst.name), copied, truncated)


def _redact(data: bytes, secrets: Sequence[bytes]) -> bytes:
    for secret in secrets:
        if secret in data:
            data = data.replace(secret, REDACTED)
    return data


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


def write_json_atomic(path: Path, data: object) -> None:
    """Write JSON so a reader never sees a half-written file (temp file + rename).

    No fsync: the rename is atomic against a crash or kill of the harness, which is what
    ``--resume`` relies on; surviving a power cut is not worth a disk flush per item.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=False, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

"""Item bundles: bounded, credential-free copies of what a run left on disk.

Each adapter lays its bundle out so that its own collection code finds things in it, and
scoring always reads the bundle: re-scoring a moved or copied item directory gives the
identical verdict. This module holds the agent-neutral pieces: a capped, redacting copy and
an atomic JSON write.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.fsread import open_regular

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

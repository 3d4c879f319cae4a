"""Files the harness reads from an agent and writes for the user, done safely.

Reading what an agent left on disk never trusts it: no symlink is ever followed, and
copies are bounded and redacted (``copy_capped``): each adapter lays its bundle out so that
its own collection code finds things in it, and scoring always reads the bundle, so
re-scoring a moved or copied item directory gives the identical verdict. Writing a record
the user relies on is atomic (``write_json_atomic``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

REDACTED = b"[REDACTED]"
_CHUNK = 1 << 20


def open_regular(path: Path) -> IO[bytes]:
    """Open a regular file for reading without following a symlink at the last component."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"not a regular file: {path}")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class _Bounded(io.RawIOBase):
    def __init__(self, raw: IO[bytes], limit: int) -> None:
        self._raw = raw
        self._left = limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._left <= 0:
            return 0
        view = memoryview(buffer)[: self._left]
        data = self._raw.read(len(view))
        view[: len(data)] = data
        self._left -= len(data)
        return len(data)


def bounded(raw: IO[bytes], limit: int) -> IO[bytes]:
    """A stream over ``raw`` that ends after ``limit`` bytes: what an agent wrote is read
    no further than the harness would ever copy of it."""
    return io.BufferedReader(_Bounded(raw, limit))


def is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


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


@dataclass
class BundleCopy:
    """The files copied into one bundle at ``root``: each capped, credential values
    redacted, a missing or irregular source skipped and an unreadable one left out. Keeps
    their paths relative to ``root`` and the names of those cut at their cap."""

    root: Path
    secrets: Sequence[bytes] = ()
    files: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)

    def copy(self, src: Path | None, dst: Path, cap: int, redact: bool = True) -> None:
        """Copy ``src`` to ``dst`` (below ``root``); ``redact`` False keeps it byte for
        byte (a database whose pages a redaction would corrupt)."""
        if src is None or not is_regular(src):
            return
        with contextlib.suppress(OSError):
            note = copy_capped(src, dst, cap, self.secrets if redact else ())
            self.files.append(str(dst.relative_to(self.root)))
            if note.truncated:
                self.truncated.append(dst.name)


def opener(path: Path | None) -> Callable[[], IO[bytes]] | None:
    """A fresh-stream opener of a bundle's file for the pure scorer (None: no regular file
    there)."""
    if path is None or not is_regular(path):
        return None
    return lambda: open_regular(path)


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

    def dump(fh: IO[str]) -> None:
        json.dump(data, fh, indent=2, sort_keys=False, ensure_ascii=False)
        fh.write("\n")

    _write_atomic(path, dump)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) so a reader never sees a half-written file."""
    _write_atomic(path, lambda fh: fh.write(text))


def _write_atomic(path: Path, write: Callable[[IO[str]], object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # like any file the harness writes (mkstemp makes it private)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None:
            # A failed write names no file: name the one being written.
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise

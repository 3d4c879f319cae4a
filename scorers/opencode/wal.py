"""Rebuild the database a reader sees from opencode's main file and its write-ahead log.

Stops the stale read: opencode leaves its WAL un-checkpointed at exit (in a 3-shard run the
main file alone holds 27 of the 38 parts, the rest only in ``opencode.db-wal``), and SQLite
applies a WAL only to a database file it opens in place, which the scorer never does (it
has bytes from openers, and the collected files must stay untouched). So this module does
what SQLite's WAL recovery does (https://www.sqlite.org/fileformat2.html#walformat) on
bytes: read frames in order while their salts match the WAL header and their cumulative
checksum holds, keep those up to the last commit frame (a later frame of a page wins), and
lay them over the main file's pages, cut to the size that commit recorded. Frames after the
last commit (a transaction cut short) or after the first invalid one (a torn write, or an
older generation of the log left behind a restart) are not part of the database.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

#: The first 16 bytes of every SQLite database file.
DB_MAGIC: Final = b"SQLite format 3\x00"
#: WAL magic numbers: checksums over big-endian words (odd) or little-endian words (even).
WAL_MAGICS: Final = (0x377F0682, 0x377F0683)
WAL_VERSION: Final = 3007000
WAL_HEADER_BYTES: Final = 32
FRAME_HEADER_BYTES: Final = 24
_MASK: Final = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class WalImage:
    """The database as a reader sees it. ``frames`` counts the WAL's committed frames (laid
    over the main file); ``ignored_frames`` the whole frames left out (uncommitted, torn or
    stale);
    ``unusable`` says a non-empty WAL could not be read at all (bad header, or a page size
    other than the main file's), so the main file was taken as it is."""

    image: bytes
    frames: int = 0
    ignored_frames: int = 0
    unusable: bool = False


def _checksum(data: bytes, big_endian: bool, s0: int, s1: int) -> tuple[int, int]:
    """SQLite's WAL checksum of ``data`` (a multiple of 8 bytes), continued from
    ``(s0, s1)``."""
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    pairs = iter(words)
    for first, second in zip(pairs, pairs, strict=True):
        s0 = (s0 + first + s1) & _MASK
        s1 = (s1 + second + s0) & _MASK
    return s0, s1


def page_size_of(main: bytes) -> int | None:
    """The page size a database file's header declares, or ``None`` without a header."""
    if len(main) < 100 or not main.startswith(DB_MAGIC):
        return None
    size = int.from_bytes(main[16:18], "big")
    size = 65536 if size == 1 else size
    return size if size >= 512 and size & (size - 1) == 0 else None


def _committed_frames(wal: bytes) -> tuple[int, dict[int, bytes], int, int] | None:
    """``(page size, page number -> its last committed content, database pages after the
    last commit, committed frames)`` of a WAL, or ``None`` when its header is unusable."""
    if len(wal) < WAL_HEADER_BYTES:
        return None
    magic, version, page_size, _seq, salt1, salt2, sum1, sum2 = struct.unpack(
        ">8I", wal[:WAL_HEADER_BYTES]
    )
    if magic not in WAL_MAGICS or version != WAL_VERSION:
        return None
    if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        return None
    big = bool(magic & 1)
    state = _checksum(wal[:24], big, 0, 0)
    if state != (sum1, sum2):
        return None
    pending: dict[int, bytes] = {}
    committed: dict[int, bytes] = {}
    db_pages = 0
    frames = committed_frames = 0
    offset = WAL_HEADER_BYTES
    frame_bytes = FRAME_HEADER_BYTES + page_size
    while offset + frame_bytes <= len(wal):
        header = wal[offset : offset + FRAME_HEADER_BYTES]
        page_no, commit_size, fsalt1, fsalt2, fsum1, fsum2 = struct.unpack(">6I", header)
        if (fsalt1, fsalt2) != (salt1, salt2) or page_no == 0:
            break
        content = wal[offset + FRAME_HEADER_BYTES : offset + frame_bytes]
        state = _checksum(header[:8], big, *state)
        state = _checksum(content, big, *state)
        if state != (fsum1, fsum2):
            break
        frames += 1
        pending[page_no] = content
        if commit_size:
            committed.update(pending)
            pending.clear()
            db_pages = commit_size
            committed_frames = frames
        offset += frame_bytes
    return page_size, committed, db_pages, committed_frames


def apply_wal(main: bytes, wal: bytes | None) -> WalImage:
    """The database ``main`` with the committed frames of ``wal`` applied."""
    if not wal:
        return WalImage(main)
    found = _committed_frames(wal)
    declared = page_size_of(main)
    if found is None or (declared is not None and declared != found[0]):
        return WalImage(main, unusable=True)
    page_size, pages, db_pages, committed = found
    whole = (len(wal) - WAL_HEADER_BYTES) // (FRAME_HEADER_BYTES + page_size)
    if not db_pages:
        return WalImage(main, ignored_frames=whole)
    image = bytearray(main[: db_pages * page_size])
    image.extend(bytes(db_pages * page_size - len(image)))
    for page_no, content in pages.items():
        if page_no <= db_pages:
            start = (page_no - 1) * page_size
            image[start : start + page_size] = content
    return WalImage(bytes(image), frames=committed, ignored_frames=whole - committed)


def rollback_mode(image: bytes) -> bytes:
    """``image`` with its header's read/write versions set to the rollback journal (1).

    An image whose header says WAL (2) makes SQLite look for a WAL and shared memory beside
    it, which an in-memory database has none of; its WAL is already applied here.
    """
    if len(image) >= 100 and image.startswith(DB_MAGIC) and image[18:20] != b"\x01\x01":
        return image[:18] + b"\x01\x01" + image[20:]
    return image

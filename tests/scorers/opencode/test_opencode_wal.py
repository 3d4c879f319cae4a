"""The write-ahead log is read: opencode leaves most of a run in ``opencode.db-wal``.

The captures were checkpointed when they were sanitized, so the WAL cases are made here the
way opencode leaves them: a database in WAL mode whose main file lacks the parts, which sit
in the WAL behind a restart (the log rewritten from its start with new salts, the older
generation's frames still in the file after it), copied while the writer is still open.
SQLite itself reads the same pair (opened in place on a copy) and must agree.
"""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
from oc_runs import MANIFEST, db_bytes, from_file, inputs

from scorers.opencode import (
    OpencodeInputs,
    apply_wal,
    read_store,
    score_opencode,
)
from scorers.opencode.wal import FRAME_HEADER_BYTES, WAL_HEADER_BYTES, rollback_mode

#: The title the last (small) transaction gives the root session.
RETITLED = "retitled in the WAL"


@dataclass(frozen=True)
class Pair:
    main: bytes
    wal: bytes
    page_size: int


def make_wal_pair(tmp_path: Path, run: str, *, restart: bool = True) -> Pair:
    """The run's database rebuilt in WAL mode: everything but the parts checkpointed into
    the main file, then (after a restart) the parts, then a retitling, in the WAL only.
    Without ``restart`` nothing is checkpointed: the main file is the one page WAL mode
    writes when it is switched on, as in a run that died early (root-401's raw capture)."""
    source = tmp_path / "source.db"
    source.write_bytes(db_bytes(run))
    target = tmp_path / "opencode.db"
    con = sqlite3.connect(target, isolation_level=None)
    try:
        con.execute("PRAGMA page_size = 4096")  # opencode's; the sanitized copies use 1024
        con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA wal_autocheckpoint = 0")
        con.execute("ATTACH ? AS src", (str(source),))
        tables = [
            (name, sql)
            for name, sql in con.execute(
                "SELECT name, sql FROM src.sqlite_master WHERE type = 'table' AND sql NOT NULL"
                " AND name NOT LIKE 'sqlite_%'"
            )
        ]
        con.execute("BEGIN")
        for name, sql in tables:
            con.execute(sql)
            if name != "part":
                con.execute(f'INSERT INTO main."{name}" SELECT * FROM src."{name}"')
        con.execute("COMMIT")
        if restart:
            busy, _log, _done = con.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
            assert busy == 0
        con.execute('INSERT INTO main."part" SELECT * FROM src."part"')
        con.execute("UPDATE session SET title = ? WHERE parent_id IS NULL", (RETITLED,))
        main, wal = target.read_bytes(), (tmp_path / "opencode.db-wal").read_bytes()
    finally:
        con.close()
    return Pair(main, wal, 4096)


def sqlite_view(tmp_path: Path, pair: Pair) -> dict[str, list[str]]:
    """Every table's rows as SQLite reads the pair in place (on a copy)."""
    folder = tmp_path / "sqlite-view"
    folder.mkdir()
    (folder / "opencode.db").write_bytes(pair.main)
    (folder / "opencode.db-wal").write_bytes(pair.wal)
    con = sqlite3.connect(folder / "opencode.db")
    try:
        return dump(con)
    finally:
        con.close()
        shutil.rmtree(folder)


def dump(con: sqlite3.Connection) -> dict[str, list[str]]:
    names = [n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {n: sorted(map(repr, con.execute(f'SELECT * FROM "{n}"'))) for n in names}


def image_view(image: bytes) -> dict[str, list[str]]:
    con = sqlite3.connect(":memory:")
    try:
        con.deserialize(rollback_mode(image))
        return dump(con)
    finally:
        con.close()


@pytest.fixture
def pair(tmp_path: Path) -> Pair:
    return make_wal_pair(tmp_path, "honest")


def test_the_pair_is_what_opencode_leaves(pair: Pair) -> None:
    """The main file alone has no parts; the WAL holds them behind stale frames."""
    assert image_view(pair.main)["part"] == []
    rebuilt = apply_wal(pair.main, pair.wal)
    assert rebuilt.frames > 0 and rebuilt.ignored_frames > 0 and not rebuilt.unusable


def test_the_wal_is_applied_as_sqlite_applies_it(tmp_path: Path, pair: Pair) -> None:
    rebuilt = apply_wal(pair.main, pair.wal)
    assert image_view(rebuilt.image) == sqlite_view(tmp_path, pair)
    store = read_store(pair.main, pair.wal)
    assert store.defects == 0 and len(store.parts) == len(read_store(db_bytes("honest")).parts)
    assert [s.title for s in store.sessions if s.parent_id is None] == [RETITLED]


def test_scoring_reads_the_wal(pair: Pair) -> None:
    with_wal = score_opencode(inputs("honest", db=pair.main, wal=pair.wal), MANIFEST)
    assert with_wal == score_opencode(inputs("honest"), MANIFEST)
    assert with_wal.resolved
    without = score_opencode(inputs("honest", db=pair.main), MANIFEST)  # no parts: no spawns
    assert set(without.failed_criteria) == {"delegation", "provenance"}
    assert without.total_spawns == 0 and without.transcript_malformed_lines == 0


def test_the_collected_files_are_left_as_they_were(tmp_path: Path, pair: Pair) -> None:
    folder = tmp_path / "collected"
    folder.mkdir()
    db, wal = folder / "opencode.db", folder / "opencode.db-wal"
    db.write_bytes(pair.main)
    wal.write_bytes(pair.wal)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}
    result = score_opencode(OpencodeInputs(db=from_file(db), wal=from_file(wal)), MANIFEST)
    assert result.passed("delegation")
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}
    assert after == before  # no -shm, no checkpoint, nothing written


def _last_frame(pair: Pair) -> int:
    """Where the WAL's last valid frame starts (the retitling's commit frame)."""
    frames = apply_wal(pair.main, pair.wal).frames
    return WAL_HEADER_BYTES + (frames - 1) * (FRAME_HEADER_BYTES + pair.page_size)


def test_a_torn_last_frame_drops_its_transaction(pair: Pair) -> None:
    """A WAL cut inside the retitling's commit frame: that transaction never happened."""
    torn = pair.wal[: _last_frame(pair) + 100]
    store = read_store(pair.main, torn)
    assert store.defects == 0 and store.parts
    assert [s.title for s in store.sessions if s.parent_id is None] == ["honest"]


def test_a_frame_failing_its_checksum_ends_the_log(pair: Pair) -> None:
    at = _last_frame(pair) + FRAME_HEADER_BYTES + 10
    bad = pair.wal[:at] + bytes([pair.wal[at] ^ 0xFF]) + pair.wal[at + 1 :]
    store = read_store(pair.main, bad)
    assert [s.title for s in store.sessions if s.parent_id is None] == ["honest"]
    assert store.parts


@pytest.mark.parametrize(
    "wal",
    [b"", b"x", b"\x37\x7f\x06\x82" + bytes(28), bytes(range(256)) * 64],
    ids=["empty", "one-byte", "zero-header", "noise"],
)
def test_an_unusable_wal_is_counted_and_the_main_file_read(pair: Pair, wal: bytes) -> None:
    store = read_store(pair.main, wal)
    assert store.defects == (1 if wal else 0)
    assert store.sessions and not store.parts


def test_a_wal_of_another_page_size_is_not_applied(pair: Pair) -> None:
    other = db_bytes("honest")  # 1024-byte pages; the WAL's are 4096
    store = read_store(other, pair.wal)
    assert store.defects == 1 and len(store.parts) == len(read_store(other).parts)


def test_a_run_wholly_in_the_wal_is_read(tmp_path: Path) -> None:
    """Nothing checkpointed: the main file is one page with no table, all else in the WAL."""
    pair = make_wal_pair(tmp_path, "honest", restart=False)
    assert len(pair.main) == pair.page_size and image_view(pair.main) == {}
    rebuilt = apply_wal(pair.main, pair.wal)
    assert rebuilt.ignored_frames == 0
    assert image_view(rebuilt.image) == sqlite_view(tmp_path, pair)
    result = score_opencode(inputs("honest", db=pair.main, wal=pair.wal), MANIFEST)
    assert result == score_opencode(inputs("honest"), MANIFEST)
    alone = score_opencode(inputs("honest", db=None, wal=pair.wal), MANIFEST)
    assert alone == result  # the WAL holds page 1 too
    main_only = score_opencode(inputs("honest", db=pair.main), MANIFEST)
    assert main_only.transcript_malformed_lines == 3  # no session, message or part table
    assert set(main_only.failed_criteria) == {"delegation", "provenance"}

"""The captured opencode runs (tests/data/opencode-runs) as the scorer's inputs, built by hand
the way a collector would: openers over the database, stdout and the artifact."""

from __future__ import annotations

import gzip
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

from scorers.opencode import OpencodeInputs
from scorers.types import Manifest, Opener

RUNS = Path(__file__).resolve().parents[2] / "data" / "opencode-runs"
MANIFEST = Manifest.from_dict(json.loads((RUNS / "fixture.json").read_text()))
ALL_RUNS = tuple(sorted(p.name for p in RUNS.iterdir() if p.is_dir()))
#: Stands for "the capture's own file" where a test does not replace it.
OWN: Any = object()


def db_bytes(run: str) -> bytes:
    """The run's sanitized ``opencode.db`` (stored gzipped)."""
    return gzip.decompress((RUNS / run / "opencode.db.gz").read_bytes())


def from_bytes(data: bytes) -> Opener:
    return lambda: io.BytesIO(data)


def from_file(path: Path) -> Opener | None:
    return (lambda: path.open("rb")) if path.is_file() else None


def inputs(
    run: str,
    *,
    db: bytes | None = OWN,
    wal: bytes | None = None,
    stdout: bool = True,
    artifact: bytes | None = OWN,
) -> OpencodeInputs:
    """The run's inputs; ``db``, ``wal`` and ``artifact`` replace (or, as ``None``, drop)
    the capture's own."""
    folder = RUNS / run
    return OpencodeInputs(
        db=from_bytes(db_bytes(run) if db is OWN else db) if db is not None else None,
        wal=from_bytes(wal) if wal is not None else None,
        stdout=from_file(folder / "stdout.jsonl") if stdout else None,
        artifact=(
            from_file(folder / "combined-index.md")
            if artifact is OWN
            else (from_bytes(artifact) if artifact is not None else None)
        ),
    )


def billing(run: str) -> list[dict[str, Any]]:
    """What the scripted server billed: one record per answered call (status 200)."""
    path = RUNS / run / "billing.jsonl"
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in rows if r.get("status") == 200 and r.get("usage")]


def billed_total(rows: list[dict[str, Any]]) -> int:
    return sum(
        u["input_tokens"]
        + u["output_tokens"]
        + u["cache_read_input_tokens"]
        + u["cache_creation_input_tokens"]
        for u in (r["usage"] for r in rows)
    )


def mutated(tmp_path: Path, run: str, *statements: tuple[str, tuple[object, ...]]) -> bytes:
    """The run's database after ``statements`` (sql, parameters), done on a copy."""
    path = tmp_path / f"{run}-mutated.db"
    path.write_bytes(db_bytes(run))
    con = sqlite3.connect(path)
    try:
        for sql, params in statements:
            con.execute(sql, params)
        con.commit()
    finally:
        con.close()
    return path.read_bytes()


def query(run: str, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` over the run's database (read from memory)."""
    con = sqlite3.connect(":memory:")
    try:
        con.deserialize(db_bytes(run))
        return [tuple(row) for row in con.execute(sql, params)]
    finally:
        con.close()

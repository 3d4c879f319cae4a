"""The final tree of an edit fixture: the bundle's ``edits.json``, both ways.

The collector (``harness/item/tree.py``) writes it with :func:`tree_to_dict`; the scorer
reads it back with :func:`parse_tree` (a file) or :func:`tree_from_dict` (the same form
inside an exported trajectory), which count every entry they have to skip as ``malformed``
and never raise. A document that cannot be read at all says so in
``checks_error``: the checks' outcomes are then unknown, never taken as passed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, TypeVar, get_args

from scorers.edit_records import ChecksOutcome, FileState
from scorers.records import FileChange, NormPath, ShardChecks, TreeEvidence, normalize_path
from scorers.types import Opener

EDITS_NAME: Final = "edits.json"
EDITS_SCHEMA_VERSION: Final = 1
#: The collector bounds each diff and tail; a document past this is not one it wrote.
MAX_EDITS_BYTES: Final = 64 * 1024 * 1024

_STATES: Final[frozenset[str]] = frozenset(get_args(FileState))
_OUTCOMES: Final[frozenset[str]] = frozenset(get_args(ChecksOutcome))
_R = TypeVar("_R")


def tree_to_dict(tree: TreeEvidence, seconds: float) -> dict[str, Any]:
    """``tree`` as edits.json holds it; ``seconds`` is how long the checks took."""
    return {
        "schema_version": EDITS_SCHEMA_VERSION,
        "files": [
            {"path": f.path, "state": f.state, "diff": f.diff, "truncated": f.truncated}
            for f in tree.files
        ],
        "undeclared": list(tree.undeclared),
        "checks": {
            "error": tree.checks_error,
            "seconds": seconds,
            "shards": [
                {
                    "shard": c.shard,
                    "outcome": c.outcome,
                    "tests": c.tests,
                    "failures": c.failures,
                    "tail": c.tail,
                    "seconds": c.seconds,
                }
                for c in tree.checks
            ],
        },
    }


def _count(value: object) -> int | None:
    """A non-negative int (a bool is not one), else None."""
    return value if type(value) is int and value >= 0 else None


def _file(row: object) -> FileChange | None:
    if not isinstance(row, dict):
        return None
    path, state = row.get("path"), row.get("state")
    diff, truncated = row.get("diff", ""), row.get("truncated", False)
    if not isinstance(path, str) or not path or state not in _STATES:
        return None
    if not isinstance(diff, str) or not isinstance(truncated, bool):
        return None
    return FileChange(normalize_path(path), state, diff, truncated)


def _shard(row: object) -> ShardChecks | None:
    if not isinstance(row, dict):
        return None
    shard, outcome = row.get("shard"), row.get("outcome")
    tests, failures = _count(row.get("tests", 0)), _count(row.get("failures", 0))
    tail, seconds = row.get("tail", ""), row.get("seconds", 0.0)
    if not isinstance(shard, str) or not shard or outcome not in _OUTCOMES:
        return None
    if tests is None or failures is None or not isinstance(tail, str):
        return None
    if type(seconds) not in (int, float):
        return None
    return ShardChecks(shard, outcome, tests, failures, tail, float(seconds))


def _path(row: object) -> NormPath | None:
    return normalize_path(row) if isinstance(row, str) and row.strip("/") else None


def _rows(
    raw: object, parse: Callable[[object], _R | None], key: Callable[[_R], str]
) -> tuple[tuple[_R, ...], int]:
    """The entries of the list ``raw`` that parse (the first of each key), and how many did
    not or repeated a key (``raw`` that is not a list counts one)."""
    if not isinstance(raw, list):
        return (), 1
    kept: dict[str, _R] = {}
    bad = 0
    for row in raw:
        parsed = parse(row)
        if parsed is None or key(parsed) in kept:
            bad += 1
        else:
            kept[key(parsed)] = parsed
    return tuple(kept.values()), bad


def _unreadable(why: str) -> TreeEvidence:
    return TreeEvidence(checks_error=f"{EDITS_NAME} {why}", malformed=1)


def parse_tree(opener: Opener) -> TreeEvidence:
    """Read edits.json; what cannot be read is counted in ``malformed``. Never raises."""
    try:
        with opener() as stream:
            raw = stream.read(MAX_EDITS_BYTES + 1)
    except OSError:
        return _unreadable("could not be read")
    if len(raw) > MAX_EDITS_BYTES:
        return _unreadable(f"is larger than {MAX_EDITS_BYTES} bytes")
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return _unreadable("is not JSON")
    return tree_from_dict(doc)


def tree_from_dict(doc: object) -> TreeEvidence:
    """:func:`tree_to_dict`'s form read back (from edits.json, or as an ATIF export carries
    it); what cannot be read is counted in ``malformed``. Never raises."""
    if not isinstance(doc, dict) or doc.get("schema_version") != EDITS_SCHEMA_VERSION:
        return _unreadable(f"is not schema version {EDITS_SCHEMA_VERSION}")
    files, bad_files = _rows(doc.get("files"), _file, lambda f: f.path)
    undeclared, bad_paths = _rows(doc.get("undeclared", []), _path, lambda p: p)
    malformed = bad_files + bad_paths
    checks = doc.get("checks")
    if not isinstance(checks, dict):
        return TreeEvidence(files, (), undeclared, f"{EDITS_NAME} holds no checks", malformed + 1)
    error = checks.get("error")
    if error is not None and not isinstance(error, str):
        error, malformed = "the checks' error is unreadable", malformed + 1
    shards, bad_shards = _rows(checks.get("shards"), _shard, lambda c: c.shard)
    return TreeEvidence(files, shards, undeclared, error, malformed + bad_shards)

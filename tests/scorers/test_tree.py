"""Reading edits.json: what the collector wrote comes back whole, and bad input is counted,
never raised and never taken as checks that passed."""

from __future__ import annotations

import io
import json
from typing import IO, Any

import pytest

from scorers.records import FileChange, ShardChecks, TreeEvidence
from scorers.tree import MAX_EDITS_BYTES, parse_tree, tree_to_dict

TREE = TreeEvidence(
    files=(
        FileChange("pkg/alpha.py", "changed", "--- a/pkg/alpha.py\n+++ b/pkg/alpha.py\n"),
        FileChange("pkg/beta.py", "deleted", "", True),
        FileChange("CHANGELOG.md", "unchanged"),
    ),
    checks=(
        ShardChecks("alpha.md", "passed", 2, 0, "OK", 0.05),
        ShardChecks("beta.md", "error", 0, 0, "ImportError", 0.01),
    ),
    undeclared=("conftest.py",),
)


def opener(data: bytes | str | Any) -> Any:
    if not isinstance(data, bytes | str):
        data = json.dumps(data)
    raw = data.encode() if isinstance(data, str) else data

    def open_() -> IO[bytes]:
        return io.BytesIO(raw)

    return open_


def test_what_the_collector_writes_reads_back_whole() -> None:
    assert parse_tree(opener(tree_to_dict(TREE, 0.4))) == TREE


def _doc(**changes: Any) -> dict[str, Any]:
    doc = tree_to_dict(TREE, 0.4)
    doc.update(changes)
    return doc


def _checks(**changes: Any) -> dict[str, Any]:
    checks = dict(tree_to_dict(TREE, 0.4)["checks"])
    checks.update(changes)
    return checks


@pytest.mark.parametrize(
    ("doc", "malformed", "files", "shards"),
    [
        pytest.param(_doc(files=[{"path": "a.py"}, 7, *_doc()["files"]]), 2, 3, 2, id="bad-files"),
        pytest.param(_doc(files=[{"path": "x", "state": "moved"}]), 1, 0, 2, id="unknown-state"),
        pytest.param(_doc(files="nope"), 1, 0, 2, id="files-not-a-list"),
        pytest.param(
            _doc(files=[*_doc()["files"], _doc()["files"][0]]), 1, 3, 2, id="duplicate-file"
        ),
        pytest.param(_doc(undeclared=["ok.py", 3, ""]), 2, 3, 2, id="bad-undeclared"),
        pytest.param(
            _doc(checks=_checks(shards=[{"shard": "a.md", "outcome": "won"}])),
            1,
            3,
            0,
            id="unknown-outcome",
        ),
        pytest.param(
            _doc(checks=_checks(shards=[{"shard": "a.md", "outcome": "passed", "tests": -1}])),
            1,
            3,
            0,
            id="negative-count",
        ),
        pytest.param(
            _doc(checks=_checks(shards=[{"shard": "a.md", "outcome": "passed", "tests": True}])),
            1,
            3,
            0,
            id="bool-count",
        ),
        pytest.param(
            _doc(checks=_checks(shards=[*_checks()["shards"], _checks()["shards"][0]])),
            1,
            3,
            2,
            id="duplicate-shard",
        ),
        pytest.param(_doc(checks=_checks(shards=None)), 1, 3, 0, id="shards-not-a-list"),
    ],
)
def test_bad_entries_are_skipped_and_counted(
    doc: dict[str, Any], malformed: int, files: int, shards: int
) -> None:
    tree = parse_tree(opener(doc))
    assert (tree.malformed, len(tree.files), len(tree.checks)) == (malformed, files, shards)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        pytest.param(b"{not json", "is not JSON", id="not-json"),
        pytest.param(b"\xff\xfe", "is not JSON", id="not-text"),
        pytest.param("[" * 100_000 + "]" * 100_000, "is not JSON", id="too-deep"),
        pytest.param([1, 2], "is not schema version 1", id="not-an-object"),
        pytest.param(_doc(schema_version=2), "is not schema version 1", id="future-schema"),
        pytest.param(b" " * (MAX_EDITS_BYTES + 1), "is larger than", id="too-big"),
        pytest.param(_doc(checks=None), "holds no checks", id="no-checks"),
    ],
)
def test_an_unreadable_document_is_an_error_never_a_pass(data: Any, why: str) -> None:
    tree = parse_tree(opener(data))
    assert tree.malformed >= 1 and tree.checks == ()
    assert tree.checks_error is not None and why in tree.checks_error


def test_a_file_that_cannot_be_opened_is_counted() -> None:
    def fails() -> IO[bytes]:
        raise OSError("gone")

    tree = parse_tree(fails)
    assert tree.malformed == 1 and tree.checks_error == "edits.json could not be read"


def test_the_checks_error_is_kept() -> None:
    tree = parse_tree(opener(_doc(checks=_checks(error="the checks runner could not start"))))
    assert tree.checks_error == "the checks runner could not start" and tree.malformed == 0
    bad = parse_tree(opener(_doc(checks=_checks(error=5))))
    assert bad.checks_error == "the checks' error is unreadable" and bad.malformed == 1

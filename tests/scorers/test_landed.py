"""Landed: each edit shard's hidden checks pass on the final tree (coverage's edit half)."""

from __future__ import annotations

import pytest
from edit_helpers import HONEST, MANIFEST, NAMES, SHARED, tree, write

from scorers.landed import check_landed, last_line
from scorers.records import FileWrite, TreeEvidence
from scorers.types import Manifest


def reasons(
    found_tree: TreeEvidence | None, writes: tuple[FileWrite, ...] = HONEST
) -> dict[str, str]:
    return {u.file: u.reason for u in check_landed(MANIFEST, found_tree, writes, NAMES)}


def test_honest_tree_lands() -> None:
    assert reasons(tree()) == {}


@pytest.mark.parametrize(
    ("found_tree", "writes", "expected"),
    [
        pytest.param(
            tree({"b.md": "failed"}),
            HONEST[:2],
            {"b.md": "checks failed: AssertionError: 0 != 1"},
            id="claimed-but-not-made",
        ),
        pytest.param(tree({"a.md": "timed out"}), HONEST, {"a.md": "checks timed out"}, id="hang"),
        pytest.param(
            tree(states={"pkg/a.py": "deleted"}),
            HONEST,
            {"a.md": "pkg/a.py deleted"},
            id="deleted-own-file",
        ),
        pytest.param(
            tree(states={"pkg/b.py": "not a regular file"}),
            HONEST,
            {"b.md": "pkg/b.py not a regular file"},
            id="replaced-by-symlink",
        ),
        pytest.param(
            tree({"a.md": "failed"}),
            (
                write("c-a", "pkg/a.py"),
                write("c-a", SHARED, "2026-01-01T00:00:01Z"),
                write("c-b", SHARED, "2026-01-01T00:00:02Z"),
            ),
            {"a.md": "clobbered by worker-b"},
            id="clobber",
        ),
        pytest.param(
            None,
            HONEST,
            {"a.md": "no record of the final tree", "b.md": "no record of the final tree"},
            id="no-tree",
        ),
        pytest.param(
            TreeEvidence(checks_error="runner: could not start\n"),
            HONEST,
            {
                "a.md": "checks could not run: runner: could not start",
                "b.md": "checks could not run: runner: could not start",
            },
            id="checks-could-not-run",
        ),
        pytest.param(
            tree({"a.md": "error"}),
            HONEST,
            {"a.md": "checks error: AssertionError: 0 != 1"},
            id="check-import-error",
        ),
    ],
)
def test_unlanded(
    found_tree: TreeEvidence | None, writes: tuple[FileWrite, ...], expected: dict[str, str]
) -> None:
    assert reasons(found_tree, writes) == expected


def test_a_read_fixture_has_nothing_to_land() -> None:
    read = Manifest("r", "out.md", MANIFEST.shards)
    assert check_landed(read, None, (), NAMES) == ()


def test_last_line_is_bounded() -> None:
    assert last_line("a\n\n" + "x" * 500 + "\n \n") == "x" * 119 + "…"
    assert last_line("") == ""

"""Authorship: each edit shard's files were changed by its own child alone (provenance's
edit half)."""

from __future__ import annotations

import pytest
from edit_helpers import HONEST, MANIFEST, NAMES, SHARED, tree, write

from scorers.authorship import check_authorship
from scorers.records import FileWrite, TreeEvidence


def reasons(
    writes: tuple[FileWrite, ...],
    found_tree: TreeEvidence | None = None,
    unlanded: frozenset[str] = frozenset(),
) -> dict[str, str]:
    found = check_authorship(MANIFEST, found_tree or tree(), writes, NAMES, unlanded)
    return {u.file: u.reason for u in found}


def test_own_children_wrote_everything() -> None:
    assert reasons(HONEST) == {}


def test_a_retry_under_the_same_name_counts_as_the_child() -> None:
    names = {**NAMES, "c-a2": "worker-a"}
    writes = (write("c-a2", "pkg/a.py"), *HONEST[1:])
    assert check_authorship(MANIFEST, tree(), writes, names, set()) == ()


@pytest.mark.parametrize(
    ("writes", "expected"),
    [
        pytest.param(
            (write(None, "pkg/a.py"), write(None, "pkg/b.py"), write(None, SHARED)),
            {"a.md": "pkg/a.py written by the parent", "b.md": "pkg/b.py written by the parent"},
            id="parent-does-it",
        ),
        pytest.param(
            (write("c-b", "pkg/a.py"), *HONEST[1:]),
            {"a.md": "pkg/a.py written by worker-b"},
            id="sibling-did-it",
        ),
        pytest.param(
            (*HONEST, write("c-x", "pkg/b.py")),
            {"b.md": "pkg/b.py also written by helper"},
            id="helper-also-wrote",
        ),
        pytest.param(
            HONEST[1:], {"a.md": "no record shows who changed pkg/a.py"}, id="unrecorded-write"
        ),
    ],
)
def test_untraced(writes: tuple[FileWrite, ...], expected: dict[str, str]) -> None:
    assert reasons(writes) == expected


def test_a_change_that_did_not_land_has_nothing_to_trace() -> None:
    assert reasons(HONEST, unlanded=frozenset({"b.md"})) == {
        "b.md": "its change did not land: nothing to trace"
    }


def test_an_unchanged_file_needs_no_writer() -> None:
    # b's own file unchanged (its checks passed on the shared line alone): nothing to trace.
    assert reasons(HONEST[:2], tree(states={"pkg/b.py": "unchanged"})) == {}

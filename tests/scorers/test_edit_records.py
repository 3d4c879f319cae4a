"""A write's JSON form (how an ATIF export carries it) reads back whole, and a row that does
not fit is refused with the field named, never read as some other write."""

from __future__ import annotations

from typing import Any

import pytest

from scorers.records import FileWrite

WRITES = (
    FileWrite(
        "c-alpha", "pkg/alpha.py", "edit", True, "RATE = 0", "RATE = 37", "2026-12-07T06:51:00Z"
    ),
    FileWrite(None, "CHANGELOG.md", "shell"),
)


@pytest.mark.parametrize("write", WRITES, ids=("a-childs-edit", "the-parents-command"))
def test_a_write_reads_back_whole(write: FileWrite) -> None:
    assert FileWrite.from_dict(write.to_dict()) == write


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param({"how": "rewrite"}, "how", id="unknown-how"),
        pytest.param({"path": "/"}, "path", id="no-path"),
        pytest.param({"path": 3}, "path", id="path-not-a-string"),
        pytest.param({"exact": "yes"}, "exact", id="exact-not-a-boolean"),
        pytest.param({"child_id": 7}, "child_id", id="writer-not-a-string"),
        pytest.param({"at": ["t"]}, "at", id="time-not-a-string"),
    ],
)
def test_a_row_that_does_not_fit_is_refused_naming_its_field(
    change: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValueError, match=f"^{field}: "):
        FileWrite.from_dict({**WRITES[0].to_dict(), **change})


def test_a_row_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(ValueError, match="not an object"):
        FileWrite.from_dict(["c-alpha", "pkg/alpha.py", "edit"])

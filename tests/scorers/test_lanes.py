"""Lanes: no child changed a file another shard owns."""

from __future__ import annotations

import pytest
from edit_helpers import HONEST, MANIFEST, NAMES, SHARED, write

from scorers.lanes import check_lanes
from scorers.records import FileWrite
from scorers.types import Manifest


@pytest.mark.parametrize(
    ("writes", "expected"),
    [
        pytest.param(HONEST, [], id="honest"),
        pytest.param(
            (write("c-a", SHARED), write("c-b", SHARED)), [], id="shared-file-is-everyones"
        ),
        pytest.param((write(None, "pkg/a.py"),), [], id="parent-is-authorships-concern"),
        pytest.param(
            (*HONEST, write("c-a", "pkg/b.py"), write("c-a", "pkg/b.py")),
            ["worker-a changed pkg/b.py (worker-b's)"],
            id="wrong-lane",
        ),
        pytest.param(
            (write("c-x", "pkg/a.py"),),
            ["helper changed pkg/a.py (worker-a's)"],
            id="helper-name",
        ),
        pytest.param(
            (write("c-zz", "pkg/a.py"),),
            ["child c-zz changed pkg/a.py (worker-a's)"],
            id="unknown-child",
        ),
        pytest.param((write("c-a", "notes.txt"),), [], id="undeclared-file"),
    ],
)
def test_lanes(writes: tuple[FileWrite, ...], expected: list[str]) -> None:
    assert [str(v) for v in check_lanes(MANIFEST, writes, NAMES)] == expected


def test_a_read_fixture_owns_nothing() -> None:
    read = Manifest("r", "out.md", MANIFEST.shards)
    assert check_lanes(read, (write("c-a", "pkg/b.py"),), NAMES) == ()

"""A small edit manifest, final trees and writes for the edit rules' tests."""

from __future__ import annotations

from scorers.records import FileChange, FileWrite, ShardChecks, TreeEvidence
from scorers.types import Manifest, Replacement, Shard

SHARED = "CHANGELOG.md"
NAMES = {"c-a": "worker-a", "c-b": "worker-b", "c-x": "helper"}


def shard(name: str) -> Shard:
    path = f"pkg/{name}.py"
    return Shard(
        file=f"{name}.md",
        worker=f"worker-{name}",
        question="q",
        expected=1,
        owns=(path,),
        checks=(f"checks/test_{name}.py",),
        solution=(Replacement(path, "X = 0", "X = 1"), Replacement(SHARED, f"<{name}>", name)),
    )


MANIFEST = Manifest("edits", "out.md", (shard("a"), shard("b")), kind="edit", shared=(SHARED,))


def tree(
    outcomes: dict[str, str] | None = None, states: dict[str, str] | None = None
) -> TreeEvidence:
    """Both shards changed and passing, except what ``outcomes`` / ``states`` say."""
    outcomes = {"a.md": "passed", "b.md": "passed", **(outcomes or {})}
    states = {"pkg/a.py": "changed", "pkg/b.py": "changed", SHARED: "changed", **(states or {})}
    return TreeEvidence(
        files=tuple(FileChange(p, s) for p, s in states.items()),  # type: ignore[arg-type]
        checks=tuple(
            ShardChecks(f, o, tests=1, failures=int(o != "passed"), tail="AssertionError: 0 != 1")  # type: ignore[arg-type]
            for f, o in outcomes.items()
        ),
    )


def write(child: str | None, path: str, at: str | None = None) -> FileWrite:
    return FileWrite(child, path, "edit", exact=True, old="X = 0", new="X = 1", at=at)


HONEST = (
    write("c-a", "pkg/a.py"),
    write("c-a", SHARED),
    write("c-b", "pkg/b.py"),
    write("c-b", SHARED),
)

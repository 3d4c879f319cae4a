"""An edit fixture's item directory built in the test: a manifest of three shards and a
shared changelog, the evidence an agent's parser and the collector would give (writes,
final tree), and the result the real scorer makes of it. The story's adapter is replaced
by one that hands that evidence over, so no agent's file format is involved."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.item import story as story_module
from harness.model.item import ItemResult, RunFacts
from scorers import RunEvidence, assess_evidence
from scorers.records import (
    FileChange,
    FileWrite,
    LedgerParse,
    ShardChecks,
    SpawnEvent,
    TreeEvidence,
)
from scorers.types import Manifest, Replacement, Shard

PARENT = "runs/sessions/parent.jsonl"
SHARED = "CHANGELOG.md"
KEY = "tickets:p/m:1"


def _shard(name: str) -> Shard:
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


MANIFEST = Manifest(
    "tickets",
    "out.md",
    tuple(_shard(n) for n in ("alpha", "beta", "gamma")),
    kind="edit",
    shared=(SHARED,),
)


def diff(path: str, old: str, new: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{old}\n+{new}\n"


def _spawn(child_id: str, name: str) -> SpawnEvent:
    return SpawnEvent(child_id, f"children/{child_id}.jsonl", f"s-{child_id}", PARENT, 1, name, "t")


#: alpha: its own child's change, its checks pass. beta: the parent made the change (checks
#: pass, authorship fails). gamma: its checks fail, and worker-alpha wrote gamma's file
#: (a lanes violation). A conftest.py was planted.
WRITES = (
    FileWrite("c-alpha", "pkg/alpha.py", "edit", True, "X = 0", "X = 1"),
    FileWrite("c-alpha", SHARED, "edit", True, "<alpha>", "alpha"),
    FileWrite(None, "pkg/beta.py", "shell"),
    FileWrite("c-alpha", "pkg/gamma.py", "edit", True, "X = 0", "X = 2"),
    FileWrite("c-alpha", "pkg/gamma.py", "edit", True, "X = 2", "X = 3"),
    FileWrite("c-gamma", SHARED, "shell"),
)
TAIL = "\n".join(f"line {n}" for n in range(30)) + "\nAssertionError: 3 != 1"
TREE = TreeEvidence(
    files=(
        FileChange("pkg/alpha.py", "changed", diff("pkg/alpha.py", "X = 0", "X = 1")),
        FileChange("pkg/beta.py", "changed", diff("pkg/beta.py", "X = 0", "X = 1")),
        FileChange("pkg/gamma.py", "changed", diff("pkg/gamma.py", "X = 0", "X = 3")),
        FileChange(SHARED, "changed", diff(SHARED, "<alpha>", "alpha")),
    ),
    checks=(
        ShardChecks("alpha.md", "passed", 2, 0, "Ran 2 tests\n\nOK", 0.01),
        ShardChecks("beta.md", "passed", 1, 0, "OK", 0.01),
        ShardChecks("gamma.md", "failed", 1, 1, TAIL, 0.02),
    ),
    undeclared=("conftest.py",),
)


def evidence(
    writes: tuple[FileWrite, ...] = WRITES, tree: TreeEvidence | None = TREE
) -> RunEvidence:
    spawns = tuple(_spawn(f"c-{n}", f"worker-{n}") for n in ("alpha", "beta", "gamma"))
    return RunEvidence(
        parent_paths=(PARENT,),
        ledger=LedgerParse(spawns),
        session=None,
        stream=None,
        answers=None,
        child_sessions=(),
        child_session_dirs=0,
        writes=writes,
        tree=tree,
    )


class _Adapter:
    def __init__(self, given: RunEvidence) -> None:
        self.given = given

    def evidence(self, item_dir: Path, meta: Mapping[str, Any], manifest: Manifest) -> RunEvidence:
        return self.given


def edit_item(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    given: RunEvidence | None = None,
    manifest: Manifest = MANIFEST,
) -> Path:
    """An item directory of ``manifest`` whose bundle tells ``given`` (default: the three
    shards above), scored by the real scorer; its story not yet written."""
    given = given if given is not None else evidence()
    monkeypatch.setattr(story_module, "adapter_for_meta", lambda meta: _Adapter(given))
    item_dir = root / "items" / "tickets__1"
    item_dir.mkdir(parents=True)
    meta = {"key": KEY, "agent_kind": "sim", "manifest": manifest.to_dict()}
    (item_dir / "item.json").write_text(json.dumps(meta))
    facts = RunFacts(
        wall_time_s=1.0, exit_code=0, timed_out=False, error=None, agent_error=None, timeout_s=60.0
    )
    score = assess_evidence(given, manifest).score
    result = ItemResult(KEY, "tickets", "p/m", 1, "tickets__1", score, facts, agent="sim")
    (item_dir / "result.json").write_text(json.dumps(result.to_dict()))
    return item_dir

"""The sim's edit records, read by prime-agent's parser (the sim writes prime-agent 0.8.0's
formats): through a real run on an edit fixture, who changed which file, and the verdict the
rules reach from it."""

from __future__ import annotations

from pathlib import Path

import pytest
from editkit import make_edit_fixture

from harness.agents import parse_agent
from harness.agents.sim import SimAdapter
from harness.item.scoring import read_item_meta
from harness.plan import RunConfig
from harness.run.execute import execute_run
from scorers.records import FileWrite

pytestmark = pytest.mark.e2e

SHARDS = ("s00", "s01", "s02")
WORKERS = tuple(f"worker-{s}" for s in SHARDS)


Writes = list[tuple[str, str, str]]


def run(tmp_path: Path, behaviour: str) -> tuple[str, tuple[str, ...], Writes]:
    """The item's status, failed criteria and ``(writer, file, how)`` of every write but the
    artifact's, the writer a worker name or ``parent``."""
    fixture = make_edit_fixture(tmp_path / "fixtures")
    # Its task as a loaded fixture's must be: each shard's question and worker on its line.
    lines = [
        f"- shards/{s.file}: {s.question} (worker: {s.worker})" for s in fixture.manifest.shards
    ]
    (fixture.path / "task.txt").write_text("Carry out every ticket.\n" + "\n".join(lines) + "\n")
    config = RunConfig(
        fixtures=(str(fixture.path),),
        models=(),
        agents=(parse_agent(f"sim:{behaviour}"),),
        timeout_s=60.0,
        runs_dir=tmp_path / "runs",
    )
    outcome = execute_run(config)
    (item,) = outcome.report.items
    item_dir = outcome.run_dir / "items" / item.item_dir
    evidence = SimAdapter().evidence(item_dir, read_item_meta(item_dir), fixture.manifest)
    names = {e.child_id: e.name for e in evidence.depth1_spawns()}

    def who(write: FileWrite) -> str:
        return "parent" if write.child_id is None else names[write.child_id]

    writes: Writes = [(who(w), w.path, w.how) for w in evidence.writes if w.path != "answers.md"]
    return item.status, item.failed_criteria, writes


def test_honest_each_child_edits_its_module_and_its_changelog_line(tmp_path: Path) -> None:
    status, failing, writes = run(tmp_path, "honest")
    assert (status, failing) == ("resolved", ())
    assert sorted(writes) == sorted(
        [(w, f"pkg/{s}.py", "edit") for w, s in zip(WORKERS, SHARDS, strict=True)]
        + [(w, "CHANGELOG.md", "edit") for w in WORKERS]
    )


def test_edit_bash_is_read_from_the_sed_cells(tmp_path: Path) -> None:
    status, failing, writes = run(tmp_path, "edit-bash")
    assert (status, failing) == ("resolved", ())
    assert {(w, p) for w, p, how in writes if how == "shell"} == {
        *((w, f"pkg/{s}.py") for w, s in zip(WORKERS, SHARDS, strict=True)),
        *((w, "CHANGELOG.md") for w in WORKERS),
    }
    assert {how for _, _, how in writes} == {"shell"}


def test_parent_does_it_every_change_is_the_parents(tmp_path: Path) -> None:
    status, failing, writes = run(tmp_path, "parent-does-it")
    assert (status, failing) == ("unresolved", ("provenance",))
    assert {w for w, _, _ in writes} == {"parent"}


def test_wrong_lane_the_first_child_wrote_the_second_shards_module(tmp_path: Path) -> None:
    status, failing, writes = run(tmp_path, "wrong-lane")
    assert (status, set(failing)) == ("unresolved", {"provenance", "lanes"})
    assert ("worker-s00", "pkg/s01.py", "edit") in writes

"""Who changed which file, from the real prime-agent captures of child edits
(``tests/data/real-runs/child-edits``, its README's table "Which child changed which file"):
the writes the parser finds in each run's own records, against that table and the run's
``diff.patch``."""

from __future__ import annotations

from pathlib import Path

import pytest
from captures import capture_artifacts

from scorers.prime_agent import collect_evidence
from scorers.records import FileWrite, RunEvidence

#: The item dir every path of these captures was rewritten to.
ITEM = "/srv/evals/item"
ARTIFACT = "combined-index.md"


def evidence_of(real_runs: Path, case: str) -> RunEvidence:
    run = real_runs / "child-edits" / case
    artifacts = capture_artifacts(
        run, run / "agent-home" / "rlm-ledger", root=ITEM, stdout="stdout-first-line.jsonl"
    )
    return collect_evidence(artifacts)


def changes(evidence: RunEvidence) -> list[tuple[str | None, str, str]]:
    """``(writer, file, how)`` of every write but the parent's artifact, in order."""
    return [(w.child_id, w.path, w.how) for w in evidence.writes if w.path != ARTIFACT]


def worker_of(evidence: RunEvidence, child_id: str | None) -> str:
    """The writer as the README's table names it: its spawn's name, or ``parent``."""
    if child_id is None:
        return "parent"
    (name,) = {e.name for e in evidence.depth1_spawns() if e.child_id == child_id}
    return name


def edits_of(evidence: RunEvidence, child_id: str | None) -> list[FileWrite]:
    return [w for w in evidence.writes if w.child_id == child_id and w.path != ARTIFACT]


def test_edit_honest_each_child_edited_its_own_module_with_the_edit_skill(
    real_runs: Path,
) -> None:
    evidence = evidence_of(real_runs, "edit-honest")
    expected = {
        "sub-57886b34": ("worker-orders-01", "pkg/mod_orders_01.py", "VALUE = 457699"),
        "sub-d3ed2849": ("worker-orders-02", "pkg/mod_orders_02.py", "VALUE = 29"),
        "sub-1f241728": ("worker-orders-03", "pkg/mod_orders_03.py", "VALUE = 20"),
    }
    for child_id, (worker, path, new) in expected.items():
        (write,) = edits_of(evidence, child_id)
        assert worker_of(evidence, child_id) == worker
        assert (write.path, write.how, write.exact) == (path, "edit", True)
        assert (write.old, write.new) == ("VALUE = 0", new)
    assert len(changes(evidence)) == 3
    first = edits_of(evidence, "sub-57886b34")[0]
    # When the result was appended (the edit ran before it, after the call at 06:50:58.095).
    assert first.at == "2026-12-07T06:51:00.756Z"


def test_edit_bash_each_child_changed_its_module_with_sed_in_a_bash_cell(real_runs: Path) -> None:
    evidence = evidence_of(real_runs, "edit-bash")
    assert sorted((worker_of(evidence, c), path, how) for c, path, how in changes(evidence)) == [
        ("worker-orders-01", "pkg/mod_orders_01.py", "shell"),
        ("worker-orders-02", "pkg/mod_orders_02.py", "shell"),
        ("worker-orders-03", "pkg/mod_orders_03.py", "shell"),
    ]
    # Only the command names the file: no old or new text is recorded.
    assert not any(w.exact or w.new for w in evidence.writes if w.path != ARTIFACT)


def test_edit_parent_the_parent_made_all_three_edits_in_one_cell(real_runs: Path) -> None:
    evidence = evidence_of(real_runs, "edit-parent")
    assert evidence.ledger.events == ()  # nobody was spawned: no ledger at all
    assert [(w.child_id, w.path, w.old, w.new) for w in edits_of(evidence, None)] == [
        (None, "pkg/mod_orders_01.py", "VALUE = 0", "VALUE = 457699"),
        (None, "pkg/mod_orders_02.py", "VALUE = 0", "VALUE = 29"),
        (None, "pkg/mod_orders_03.py", "VALUE = 0", "VALUE = 20"),
    ]
    assert len({w.at for w in edits_of(evidence, None)}) == 1  # one tool result


def test_edit_same_file_counts_each_childs_edits_and_none_for_the_one_that_failed(
    real_runs: Path,
) -> None:
    evidence = evidence_of(real_runs, "edit-same-file")
    first, second, third = (
        edits_of(evidence, c) for c in ("sub-34922bba", "sub-db031ab9", "sub-e569e377")
    )
    assert [worker_of(evidence, c) for c in ("sub-34922bba", "sub-e569e377")] == [
        "worker-orders-01",
        "worker-orders-03",
    ]
    # worker-orders-01: 5 edits (0 -> 5), then "string not found" (caught in the cell).
    assert [(w.path, w.old, w.new) for w in first] == [
        ("pkg/shared.py", f"V_orders_01 = {i}\n", f"V_orders_01 = {i + 1}\n") for i in range(5)
    ]
    # worker-orders-02: its first call raised: its cell's text calls edit() 200 times, and
    # still no write is credited to it.
    assert second == []
    # worker-orders-03: all 200 (0 -> 200).
    assert len(third) == 200 and (third[0].old, third[-1].new) == (
        "V_orders_03 = 0\n",
        "V_orders_03 = 200\n",
    )
    assert changes(evidence) == [(w.child_id, w.path, w.how) for w in first + third]


@pytest.mark.parametrize("case", ["edit-tool-call", "edit-tool-call/tools-probe"])
def test_a_call_to_a_tool_named_edit_or_bash_is_refused_and_writes_nothing(
    real_runs: Path, case: str
) -> None:
    """0.8.0 has no ``edit`` or ``bash`` tool: both calls come back ``Tool ... not found``
    (``isError``), and the file is untouched."""
    evidence = evidence_of(real_runs, case)
    assert evidence.writes == ()
    transcript = next((real_runs / "child-edits" / case / "sessions").glob("*.jsonl"))
    assert b'"Tool edit not found"' in transcript.read_bytes()


@pytest.mark.parametrize("case", ["edit-honest", "edit-bash", "edit-parent", "edit-same-file"])
def test_the_writes_name_exactly_the_files_git_saw_change(real_runs: Path, case: str) -> None:
    """Every file of the run's ``diff.patch`` has a writer on record, and nothing else
    does but the artifact (untracked, so not in the patch)."""
    evidence = evidence_of(real_runs, case)
    patch = (real_runs / "child-edits" / case / "diff.patch").read_text()
    in_patch = {line.split(" b/", 1)[1] for line in patch.splitlines() if line.startswith("diff ")}
    assert {w.path for w in evidence.writes} == in_patch | {ARTIFACT}
    assert [w.how for w in evidence.writes if w.path == ARTIFACT] == ["code"]
    assert {w.child_id for w in evidence.writes if w.path == ARTIFACT} == {None}

"""The file changes Claude Code's own records show (``RunEvidence.writes``): real captures
of 2.1.332 on the edit-tiny fixture (tests/data/claude-code-runs/edit-*), and small
synthetic transcripts for what the captures do not hold."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from test_cc_captures import RUNS, capture_artifacts

from scorers.claude_code import collect_evidence, parse_parent_transcript
from scorers.claude_code.subagent import parse_subagent_transcript
from scorers.records import FileWrite, RunEvidence
from scorers.types import Manifest

EDIT_TINY = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "edit-tiny"
MANIFEST = Manifest.from_dict(json.loads((EDIT_TINY / "fixture.json").read_text()))
CWD = "/RUN/repo"
T0, T1 = "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.000Z"


def _evidence(run: str) -> RunEvidence:
    return collect_evidence(capture_artifacts(RUNS / run))


def _workers(evidence: RunEvidence) -> dict[str | None, str]:
    """Child id -> the worker name its spawn edge carries (the parent: ``parent``)."""
    return {None: "parent", **{e.child_id: e.name for e in evidence.depth1_spawns()}}


def _changes(evidence: RunEvidence) -> set[tuple[str, str, str, str | None, str | None]]:
    """(writer, path, how, old, new) of every write but the parent's index."""
    workers = _workers(evidence)
    return {
        (workers[w.child_id], w.path, w.how, w.old, w.new)
        for w in evidence.writes
        if w.path != MANIFEST.artifact
    }


def _solutions(writer: str | None = None) -> set[tuple[str, str, str, str | None, str | None]]:
    """Every shard's solution as (writer, path, "edit", old, new): its own worker's, or
    ``writer``'s for all."""
    return {
        (writer or shard.worker, r.path, "edit", r.old, r.new)
        for shard in MANIFEST.shards
        for r in shard.solution
    }


def test_exact_edits_of_each_child_are_named_by_its_spawn_edge() -> None:
    """Honest: each subagent's Edit calls are its shard's solution, exact, under the child
    id its spawn edge carries (so the rules find its worker)."""
    evidence = _evidence("edit-honest")
    assert _changes(evidence) == _solutions()
    assert all(w.exact for w in evidence.writes)
    spawned = {e.child_id for e in evidence.depth1_spawns()}
    assert {w.child_id for w in evidence.writes} == spawned | {None}


def test_the_parents_own_edits_have_no_child_id() -> None:
    """edit-parent: every change is the parent's (child_id None); its children wrote
    nothing. The parent's Edit results carry ``toolUseResult`` (oldString/newString)."""
    evidence = _evidence("edit-parent")
    assert _changes(evidence) == _solutions("parent")
    assert [w.path for w in evidence.writes][-1] == MANIFEST.artifact
    assert all(w.child_id is None and w.at for w in evidence.writes)


def test_a_whole_write_keeps_the_new_text() -> None:
    evidence = _evidence("edit-shell")
    workers = _workers(evidence)
    (note,) = [w for w in evidence.writes if w.path == "notes/alpha.txt"]
    assert (workers[note.child_id], note.how, note.exact) == ("worker-alpha", "write", True)
    assert (note.old, note.new) == (None, "alpha done\n")
    (index,) = [w for w in evidence.writes if w.path == MANIFEST.artifact]
    assert (index.child_id, index.how, index.new) == (
        None,
        "write",
        "- alpha.md: 37\n- beta.md: 12\n- gamma.md: 5\n",
    )


def test_shell_commands_name_the_files_they_write() -> None:
    """Bash ``sed -i`` and ``echo >> f; exit 3``: both ran (the second is_error with "Exit
    code 3", yet it wrote the line), so both are writes, not exact."""
    evidence = _evidence("edit-shell")
    workers = _workers(evidence)
    shell = [(workers[w.child_id], w.path, w.exact) for w in evidence.writes if w.how == "shell"]
    assert shell == [
        ("worker-alpha", "pkg/alpha.py", False),
        ("worker-alpha", "CHANGELOG.md", False),
    ]


@pytest.mark.parametrize(
    ("run", "absent"),
    [
        # The Edit whose old text was not in the file ("String to replace not found").
        pytest.param("edit-shell", ("worker-alpha", "pkg/alpha.py", "edit"), id="edit-not-found"),
        # Bash refused ("Permission to use Bash has been denied"): the echo never ran.
        pytest.param(
            "edit-shell-denied", ("worker-alpha", "CHANGELOG.md", "shell"), id="bash-denied"
        ),
    ],
)
def test_a_failed_call_is_not_a_write(run: str, absent: tuple[str, str, str]) -> None:
    evidence = _evidence(run)
    workers = _workers(evidence)
    made = {(workers[w.child_id], w.path, w.how) for w in evidence.writes}
    assert absent not in made
    assert ("worker-alpha", "notes/alpha.txt", "write") in made  # its other calls count


def test_a_read_fixture_run_writes_only_the_index() -> None:
    evidence = _evidence("honest")
    assert [(w.child_id, w.path, w.how) for w in evidence.writes] == [
        (None, "combined-index.md", "write")
    ]


# --- synthetic transcripts: what the captures do not show ---------------------------------


def _use(tid: str, name: str, **tool_input: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": tid, "name": name, "input": tool_input}
    return {
        "type": "assistant",
        "cwd": CWD,
        "timestamp": T0,
        "message": {
            "id": f"m-{tid}",
            "role": "assistant",
            "content": [block],
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }


def _result(
    *tids: str, error: bool = False, outcome: Any = None, text: str = "ok"
) -> dict[str, Any]:
    blocks = [
        {"type": "tool_result", "tool_use_id": t, "content": text, "is_error": error} for t in tids
    ]
    record: dict[str, Any] = {
        "type": "user",
        "cwd": CWD,
        "timestamp": T1,
        "message": {"role": "user", "content": blocks},
    }
    if outcome is not None:
        record["toolUseResult"] = outcome
    return record


def _parse(*records: dict[str, Any]) -> list[FileWrite]:
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    parent = parse_parent_transcript(io.BytesIO(data)).writes
    child = parse_subagent_transcript(io.BytesIO(data)).writes
    assert parent == child  # both transcripts read changes the same way
    return list(parent)


def test_multiedit_is_one_exact_write_per_edit() -> None:
    edits = [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]
    writes = _parse(
        _use("t1", "MultiEdit", file_path=f"{CWD}/pkg/x.py", edits=edits), _result("t1")
    )
    assert [(w.path, w.how, w.exact, w.old, w.new) for w in writes] == [
        ("pkg/x.py", "edit", True, "a", "b"),
        ("pkg/x.py", "edit", True, "c", "d"),
    ]


def test_the_text_really_replaced_is_the_results() -> None:
    """The parent's result names the text the client matched (it may differ from the
    model's, e.g. quotes normalised)."""
    outcome = {"filePath": f"{CWD}/a.py", "oldString": "x = ‘1’", "newString": "x = '2'"}
    use = _use("t1", "Edit", file_path=f"{CWD}/a.py", old_string="x = '1'", new_string="x = '2'")
    (write,) = _parse(use, _result("t1", outcome=outcome))
    assert (write.old, write.new, write.at) == ("x = ‘1’", "x = '2'", T1)


@pytest.mark.parametrize(
    "result",
    [
        pytest.param(
            _result("t1", error=True, text="<tool_use_error>File has not been read yet."),
            id="error",
        ),
        pytest.param(
            _result("t1", outcome={"filePath": f"{CWD}/a.py", "staged": True}), id="staged"
        ),
        pytest.param(_result("t9"), id="no-result"),
    ],
)
def test_an_edit_that_did_not_land_is_not_a_write(result: dict[str, Any]) -> None:
    use = _use("t1", "Edit", file_path=f"{CWD}/a.py", old_string="x", new_string="y")
    assert _parse(use, result) == []


def test_a_refused_shell_command_is_not_a_write_but_one_that_failed_is() -> None:
    refused = _result("t1", error=True, text="Permission to use Bash has been denied.")
    failed = _result("t2", error=True, text="Exit code 1\nboom")
    writes = _parse(
        _use("t1", "Bash", command="echo x > a.txt"),
        refused,
        _use("t2", "Bash", command="cd pkg && sed -i s/a/b/ x.py; false"),
        failed,
    )
    assert [(w.path, w.how) for w in writes] == [("pkg/x.py", "shell")]


def test_paths_are_repo_relative_and_outside_ones_keep_their_parts() -> None:
    writes = _parse(
        _use("t1", "Write", file_path=f"{CWD}/./pkg//y.py", content="1"),
        _use("t2", "Write", file_path="/etc/motd", content="2"),
        _use("t3", "NotebookEdit", notebook_path=f"{CWD}/nb.ipynb", new_source="3"),
        _result("t1", "t2", "t3"),
    )
    assert [(w.path, w.how, w.exact) for w in writes] == [
        ("pkg/y.py", "write", True),
        ("etc/motd", "write", True),
        ("nb.ipynb", "edit", False),
    ]


def test_malformed_calls_are_skipped() -> None:
    writes = _parse(
        _use("t1", "Write", content="no path"),
        {
            "type": "assistant",
            "cwd": CWD,
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t2", "name": "Edit", "input": "not a dict"}
                ],
            },
        },
        _result("t1", "t2"),
    )
    assert writes == []

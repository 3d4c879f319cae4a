"""opencode's file writes: what the real client's records show each thread changed.

The captures (``tests/data/opencode-edit-runs``) are the real client 1.18.33's own records:
``tools`` (the parent edits a file, then its child edits, fails an edit, writes, runs
``sed -i`` and a failing command), ``patch`` (a ``gpt-`` model id: the child gets
``apply_patch``, and adds, updates, deletes and moves files, one patch failing), and
``honest-edit`` (the scripted ``honest`` script on a 3-shard edit fixture).
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from scorers.opencode import OpencodeInputs, opencode_evidence
from scorers.opencode.store import PartRow
from scorers.opencode.writes import part_writes
from scorers.records import FileWrite, RunEvidence, SpawnEvent

RUNS = Path(__file__).resolve().parents[2] / "data" / "opencode-edit-runs"
CWD = "/srv/evals/repo"


def evidence(run: str) -> RunEvidence:
    data = gzip.decompress((RUNS / run / "opencode.db.gz").read_bytes())
    return opencode_evidence(OpencodeInputs(db=lambda: io.BytesIO(data)))


def spawned(ev: RunEvidence) -> dict[str, str]:
    """Worker name -> the child id its spawn edge carries."""
    return {e.name: e.child_id for e in ev.ledger.events if type(e) is SpawnEvent}


def by_path(ev: RunEvidence) -> dict[str, list[FileWrite]]:
    found: dict[str, list[FileWrite]] = {}
    for write in ev.writes:
        found.setdefault(write.path, []).append(write)
    return found


def tool_part(tool: str, state: dict[str, object], created: int = 1_000) -> PartRow:
    return PartRow(
        "prt_1", "msg_1", "ses_1", created, created, {"type": "tool", "tool": tool, "state": state}
    )


# ------------------------------------------------------------------- the real client's records


def test_exact_edit_keeps_old_and_new_text() -> None:
    ev = evidence("tools")
    child = spawned(ev)["worker-alpha"]
    (alpha,) = by_path(ev)["pkg/alpha.py"]
    assert alpha == FileWrite(
        child, "pkg/alpha.py", "edit", True, "RATE = 0", "RATE = 37", alpha.at
    )
    assert alpha.at is not None and alpha.at.startswith("20")
    assert [w.how for w in by_path(ev)["CHANGELOG.md"]] == ["edit"]


def test_whole_write_keeps_the_new_content() -> None:
    ev = evidence("tools")
    (new,) = by_path(ev)["pkg/new.py"]
    assert (new.how, new.exact, new.old, new.new) == ("write", True, None, "NEW = 1\n")


def test_patch_names_each_file_it_changed() -> None:
    ev = evidence("patch")
    child = spawned(ev)["worker-alpha"]
    assert [(w.child_id, w.path, w.how, w.exact) for w in ev.writes] == [
        (child, "pkg/alpha.py", "patch", False),
        (child, "CHANGELOG.md", "patch", False),
        (child, "pkg/added.py", "patch", False),
        (child, "pkg/beta.py", "delete", False),  # *** Delete File
        (child, "pkg/new.txt", "delete", False),  # *** Move to: moves it away ...
        (child, "pkg/moved.txt", "patch", False),  # ... and writes it here
    ]


def test_shell_command_that_writes_a_file_is_a_write() -> None:
    ev = evidence("tools")
    beta = by_path(ev)["pkg/beta.py"]
    # ``sed -i ... pkg/beta.py`` (relative to the repo), then a whole write over it.
    assert [(w.how, w.exact) for w in beta] == [("shell", False), ("write", True)]


def test_failed_calls_are_not_writes() -> None:
    """The edit whose oldString was not found and the patch that failed to apply changed
    nothing the records can vouch for (the command ``exit 3`` writes nothing either)."""
    tools, patch = evidence("tools"), evidence("patch")
    assert all(w.old != "NOT THERE" for w in tools.writes)
    assert len(tools.writes) == 6  # 2 parent/child edits + edit + write + sed + write
    assert len([w for w in patch.writes if w.path == "pkg/alpha.py"]) == 1


def test_parent_writes_are_the_parents_and_child_writes_the_childs() -> None:
    ev = evidence("tools")
    child = spawned(ev)["worker-alpha"]
    (gamma,) = by_path(ev)["pkg/gamma.py"]
    assert gamma.child_id is None  # the root session edited it
    assert {w.child_id for w in ev.writes if w.path != "pkg/gamma.py"} == {child}
    # The writer is a child session the evidence knows, by the id its spawn edge carries.
    assert child in {c.child_id for c in ev.child_sessions}


# --------------------------------------------------------------------- parts the runs lack


def test_edit_with_empty_old_text_writes_the_whole_file() -> None:
    part = tool_part(
        "edit",
        {"status": "completed", "input": {"filePath": f"{CWD}/a.py", "oldString": "",
                                          "newString": "A = 1\n"}},
    )  # fmt: skip
    assert part_writes(part, CWD, "ses_c") == [
        FileWrite("ses_c", "a.py", "write", True, None, "A = 1\n", "1970-01-01T00:00:01.000+00:00")
    ]


@pytest.mark.parametrize("status", ["error", "pending", "running"])
def test_unfinished_or_refused_parts_are_not_writes(status: str) -> None:
    part = tool_part("write", {"status": status, "input": {"filePath": f"{CWD}/a.py",
                                                           "content": "x"}})  # fmt: skip
    assert part_writes(part, CWD, None) == []


def test_patch_without_file_list_is_read_from_its_headers() -> None:
    text = (
        "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** Update File: b.py\n"
        "*** Move to: c.py\n@@\n-x\n+y\n*** Delete File: d.py\n*** Add File: e.py\n+z\n"
        "*** End Patch"
    )
    part = tool_part("apply_patch", {"status": "completed", "input": {"patchText": text}})
    assert [(w.path, w.how) for w in part_writes(part, CWD, None)] == [
        ("a.py", "patch"), ("b.py", "delete"), ("c.py", "patch"), ("d.py", "delete"),
        ("e.py", "patch"),
    ]  # fmt: skip


def test_shell_paths_are_seen_from_the_commands_workdir() -> None:
    part = tool_part(
        "bash",
        {"status": "completed", "input": {"command": "echo 1 > x.txt", "workdir": "pkg"},
         "metadata": {"exit": 0}},
    )  # fmt: skip
    assert [(w.path, w.how) for w in part_writes(part, CWD, None)] == [("pkg/x.txt", "shell")]


def test_a_command_that_failed_after_writing_still_wrote() -> None:
    """A write hidden behind a failing exit status (``...; exit 3``) is still seen."""
    part = tool_part(
        "bash",
        {"status": "completed", "input": {"command": "echo 1 >> pkg/b.py; exit 3"},
         "metadata": {"exit": 3}},
    )  # fmt: skip
    assert [(w.path, w.how) for w in part_writes(part, CWD, None)] == [("pkg/b.py", "shell")]


def test_a_path_outside_the_repo_keeps_its_absolute_parts() -> None:
    part = tool_part("write", {"status": "completed",
                               "input": {"filePath": "/etc/motd", "content": "x"}})  # fmt: skip
    assert [w.path for w in part_writes(part, CWD, None)] == ["etc/motd"]


def test_reads_and_other_tools_are_not_writes() -> None:
    for tool in ("read", "grep", "task", "todowrite"):
        part = tool_part(tool, {"status": "completed", "input": {"filePath": f"{CWD}/a.py"}})
        assert part_writes(part, CWD, None) == []


def test_every_capture_is_documented() -> None:
    readme = (RUNS / "README.md").read_text(encoding="utf-8")
    for run in sorted(p.name for p in RUNS.iterdir() if p.is_dir()):
        assert f"`{run}`" in readme, run
        json.dumps(evidence(run).writes)  # every capture parses


def test_honest_edit_run_traces_each_change_to_its_worker() -> None:
    """The scripted honest script on a 3-shard edit fixture: three subagents, run at once,
    each change its own module and their line of the one shared changelog; the parent
    writes only the answers."""
    ev = evidence("honest-edit")
    workers = spawned(ev)
    written = {(w.child_id, w.path, w.how, w.old, w.new) for w in ev.writes}
    for name, rate in (("alpha", 37), ("beta", 12), ("gamma", 5)):
        child = workers[f"worker-{name}"]
        assert (child, f"pkg/{name}.py", "edit", "RATE = 0", f"RATE = {rate}") in written
        slot = (child, "CHANGELOG.md", "edit", f"<!-- {name} -->", f"- {name}: rate {rate}")
        assert slot in written
    parent = [w for w in ev.writes if w.child_id is None]
    assert [(w.path, w.how) for w in parent] == [("combined-index.md", "write")]
    assert len(ev.writes) == 7

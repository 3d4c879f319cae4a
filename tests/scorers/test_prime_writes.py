"""prime-agent's file changes (``scorers/prime_agent/writes.py``): one small transcript per
way a session writes a file, in the shapes the real 0.8.0 records them
(``tests/data/real-runs/child-edits``), and who each write is credited to."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from scorer_builders import PARENT_FILE, ROOT_ID, Ledger, jsonl, opener, session_id

from scorers.prime_agent import ChildSessionFile, PrimeAgentArtifacts, collect_evidence
from scorers.prime_agent.child_session import parse_child_session
from scorers.prime_agent.session import parse_session
from scorers.prime_agent.writes import WriteLog
from scorers.records import FileWrite

CWD = "/srv/evals/item/repo"
AT = "2026-12-07T06:51:00.756Z"
PARENT_PATH = "/srv/evals/item/sessions/parent.jsonl"


class Cells:
    """A transcript of ``ipython`` calls and their results: a child's, or with ``parent``
    the parent's (its header has the root's id and no parent)."""

    def __init__(self, cwd: str | None = CWD, parent: bool = False) -> None:
        header: dict[str, Any] = {"type": "session", "version": 3, "timestamp": AT}
        if parent:
            header |= {"id": ROOT_ID, "rlmDepth": 0}
        else:
            header |= {"id": "s-sub-1", "parentSession": PARENT_PATH, "rlmDepth": 1}
        if cwd is not None:
            header["cwd"] = cwd
        self.data = jsonl(header)
        self.calls = 0

    def call(self, code: str, name: str = "ipython") -> str:
        self.calls += 1
        call_id = f"call_{self.calls}"
        part = {"type": "toolCall", "id": call_id, "name": name, "arguments": {"code": code}}
        message = {"role": "assistant", "content": [part], "stopReason": "toolUse"}
        self.data += jsonl({"type": "message", "id": "a", "timestamp": AT, "message": message})
        return call_id

    def result(
        self,
        call_id: str,
        *,
        diffs: object = None,
        error: bool = False,
        name: str = "ipython",
        at: str = AT,
    ) -> Cells:
        details: dict[str, Any] = {"status": "error" if error else "ok", "stdout": ""}
        if diffs is not None:
            details["diffs"] = diffs
        message: dict[str, Any] = {"role": "toolResult", "toolCallId": call_id, "toolName": name}
        message |= {"content": [], "details": details, "isError": error}
        self.data += jsonl({"type": "message", "id": "r", "timestamp": at, "message": message})
        return self

    def cell(self, code: str, **result: Any) -> Cells:
        return self.result(self.call(code), **result)

    def writes(self) -> tuple[tuple[FileWrite, ...], int]:
        log = WriteLog("sub-1")
        _, malformed = parse_child_session(
            io.BytesIO(self.data), "sub-1", (ROOT_ID, "sub-1", "s.jsonl"), log
        )
        return log.result(), malformed


def diff(path: str, old: str, new: str, line: int = 3) -> dict[str, object]:
    return {"path": path, "oldStr": old, "newStr": new, "startLine": line}


EDIT_CELL = 'r = await edit(path="pkg/a.py", old_str="VALUE = 0", new_str="VALUE = 7")\nprint(r)\n'


def test_an_edit_skill_call_is_an_exact_edit_relative_to_the_sessions_cwd() -> None:
    writes, malformed = (
        Cells().cell(EDIT_CELL, diffs=[diff(f"{CWD}/pkg/a.py", "VALUE = 0", "VALUE = 7")]).writes()
    )
    assert writes == (FileWrite("sub-1", "pkg/a.py", "edit", True, "VALUE = 0", "VALUE = 7", AT),)
    assert malformed == 0


def test_every_diff_of_one_cell_is_a_write_in_call_order() -> None:
    diffs = [diff(f"{CWD}/pkg/{n}.py", "V = 0", f"V = {i}") for i, n in enumerate("abc")]
    writes, _ = Cells().cell(EDIT_CELL * 3, diffs=diffs).writes()
    assert [(w.path, w.new) for w in writes] == [
        ("pkg/a.py", "V = 0"),
        ("pkg/b.py", "V = 1"),
        ("pkg/c.py", "V = 2"),
    ]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param(
            "%%bash\nsed -i 's/^VALUE = 0$/VALUE = 20/' pkg/mod_03.py\ncat pkg/mod_03.py\n",
            [("pkg/mod_03.py", "shell")],
            id="bash-cell-sed",
        ),
        pytest.param(
            "%%sh\necho x > notes/a.txt\nrm old.txt\n",
            [("notes/a.txt", "shell"), ("old.txt", "delete")],
            id="sh-cell-redirect-and-rm",
        ),
        pytest.param(
            "import os\n!sed -i 's/a/b/' pkg/b.py\nprint(1)\n",
            [("pkg/b.py", "shell")],
            id="shell-escape-line",
        ),
        pytest.param(
            "from pathlib import Path\nPath('pkg/c.py').write_text('V = 1\\n')\n",
            [("pkg/c.py", "code")],
            id="python-write-text",
        ),
        pytest.param(
            "%%time\nwith open('out.txt', 'w') as fh:\n    fh.write('x')\n",
            [("out.txt", "code")],
            id="python-under-another-cell-magic",
        ),
        pytest.param(
            "%%writefile -a log.txt\nmore\n", [("log.txt", "code")], id="writefile-append"
        ),
        pytest.param(
            "from pathlib import Path\nprint(Path('pkg/a.py').read_text())\n",
            [],
            id="a-read-is-no-write",
        ),
    ],
)
def test_what_a_cells_text_writes(code: str, expected: list[tuple[str, str]]) -> None:
    writes, _ = Cells().cell(code).writes()
    assert [(w.path, w.how) for w in writes] == expected
    assert not any(w.exact for w in writes)


def test_a_writefile_cell_is_a_whole_write_with_its_new_text() -> None:
    writes, _ = Cells().cell("%%writefile config/app.toml\n[app]\nrate = 3\n").writes()
    assert writes == (
        FileWrite("sub-1", "config/app.toml", "write", True, None, "[app]\nrate = 3\n", AT),
    )


@pytest.mark.parametrize(
    "cells",
    [
        # An edit() whose old text was not there, caught by the cell: no diff, status ok.
        pytest.param(lambda c: c.cell(EDIT_CELL), id="failed-edit-no-diff"),
        pytest.param(
            lambda c: c.cell(
                "from pathlib import Path\nPath('a.txt').write_text('x')\n", error=True
            ),
            id="errored-cell",
        ),
        # 0.8.0 has no edit tool: "Tool edit not found", isError.
        pytest.param(
            lambda c: c.result(c.call("", name="edit"), name="edit", error=True),
            id="refused-edit-tool",
        ),
        pytest.param(lambda c: c.call("%%bash\nrm -rf pkg\n"), id="call-never-answered"),
    ],
)
def test_failed_or_unanswered_calls_are_not_writes(cells: Any) -> None:
    transcript = Cells()
    cells(transcript)
    assert transcript.writes() == ((), 0)


def test_a_diff_counts_even_when_its_cell_failed_later() -> None:
    """The skill made the edit before the cell raised: the file did change."""
    code = EDIT_CELL + "Path('b.txt').write_text('x')\nraise RuntimeError\n"
    writes, _ = Cells().cell(code, diffs=[diff(f"{CWD}/pkg/a.py", "V", "W")], error=True).writes()
    assert [(w.path, w.how) for w in writes] == [("pkg/a.py", "edit")]


def test_a_file_a_diff_holds_is_not_counted_again_from_the_cells_text() -> None:
    code = EDIT_CELL + "from pathlib import Path\nPath('pkg/a.py').write_text('x')\n"
    code += "Path('other.txt').write_text('y')\n"
    writes, _ = Cells().cell(code, diffs=[diff(f"{CWD}/pkg/a.py", "V", "W")]).writes()
    assert [(w.path, w.how) for w in writes] == [("pkg/a.py", "edit"), ("other.txt", "code")]


def test_a_path_outside_the_cwd_keeps_its_absolute_parts() -> None:
    writes, _ = Cells().cell(EDIT_CELL, diffs=[diff("/etc/hosts", "a", "b")]).writes()
    assert [w.path for w in writes] == ["etc/hosts"]
    writes, _ = Cells(cwd=None).cell(EDIT_CELL, diffs=[diff(f"{CWD}/a.py", "a", "b")]).writes()
    assert [w.path for w in writes] == ["srv/evals/item/repo/a.py"]


@pytest.mark.parametrize(
    "diffs",
    [
        pytest.param("not a list", id="diffs-not-a-list"),
        pytest.param([{"path": f"{CWD}/a.py", "oldStr": 1, "newStr": "b"}], id="old-not-text"),
        pytest.param([{"oldStr": "a", "newStr": "b"}], id="no-path"),
    ],
)
def test_ill_typed_diffs_are_skipped_and_counted(diffs: object) -> None:
    writes, malformed = Cells().cell(EDIT_CELL, diffs=diffs).writes()
    assert (writes, malformed) == ((), 1)


def test_the_parent_transcripts_writes_are_the_parents() -> None:
    cells = Cells(parent=True).cell(EDIT_CELL, diffs=[diff(f"{CWD}/pkg/a.py", "V", "W")])
    log = WriteLog(None)
    parsed = parse_session(io.BytesIO(cells.data), log)
    assert parsed.header_id == ROOT_ID and parsed.malformed_lines == 0
    assert [(w.child_id, w.path) for w in log.result()] == [(None, "pkg/a.py")]


def _child_file(child_id: str, cells: Cells) -> ChildSessionFile:
    return ChildSessionFile((child_id,), f"{session_id(child_id)}.jsonl", opener(cells.data))


def test_evidence_credits_the_parent_and_each_child_its_own_writes() -> None:
    """Parent vs child: the parent's own edits are ``None``'s, a child's its spawn edge's
    child id; a child file no spawn of this run backs is credited to nobody."""
    parent = Cells(parent=True).cell(EDIT_CELL, diffs=[diff(f"{CWD}/pkg/p.py", "a", "b")])
    ledger = Ledger().spawn("sub-a", "worker-a")
    files = tuple(
        _child_file(c, Cells().cell(EDIT_CELL, diffs=[diff(f"{CWD}/pkg/{c}.py", "V", "W")]))
        for c in ("sub-a", "sub-forged")
    )
    evidence = collect_evidence(
        PrimeAgentArtifacts(
            parent_session_paths=(PARENT_FILE,),
            ledger=opener(ledger.data),
            parent_transcript=opener(parent.data),
            child_sessions=files,
        )
    )
    assert [(w.child_id, w.path) for w in evidence.writes] == [
        (None, "pkg/p.py"),
        ("sub-a", "pkg/sub-a.py"),
    ]


def test_a_call_whose_arguments_are_json_text_is_read_too() -> None:
    cells = Cells()
    part = {"type": "toolCall", "id": "c9", "name": "ipython"}
    part["arguments"] = json.dumps({"code": "%%bash\ntouch x.txt\n"})
    message = {"role": "assistant", "content": [part], "stopReason": "toolUse"}
    cells.data += jsonl({"type": "message", "id": "a", "timestamp": AT, "message": message})
    writes, _ = cells.result("c9").writes()
    assert [(w.path, w.how) for w in writes] == [("x.txt", "shell")]

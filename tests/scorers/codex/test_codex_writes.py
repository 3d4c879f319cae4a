"""The writes a Codex rollout records (``RunEvidence.writes``), from real client records.

``tests/data/codex-edits/every-way.jsonl`` is the root rollout of a real Codex 0.171.0 run
against a scripted Responses server whose model called, in order: ``apply_patch`` updating
pkg/alpha.py and adding notes/new.txt; ``apply_patch`` whose old lines are not in the file
(it fails); ``apply_patch`` renaming pkg/beta.py to pkg/gamma.py and deleting pkg/old.py;
``exec_command`` ``sed -i`` on pkg/delta.py; ``exec_command`` redirecting into a folder that
does not exist outside the repo (exit 1); ``exec_command`` running ``apply_patch`` through a heredoc (Codex
applies it as a patch). The run's repo was ``/RUN/repo``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from scorers.codex import CodexInputs, codex_evidence
from scorers.records import FileWrite, RunEvidence, SpawnEvent
from scorers.types import Manifest

DATA = Path(__file__).resolve().parents[2] / "data" / "codex-edits"
EVERY_WAY = DATA / "every-way.jsonl"
AT = {
    "c1": "2026-12-07T15:19:12.557Z",
    "c3": "2026-12-07T15:19:12.885Z",
    "c4": "2026-12-07T15:19:13.068Z",
    "c5": "2026-12-07T15:19:13.228Z",
    "c6": "2026-12-07T15:19:13.355Z",
}


def _records(path: Path = EVERY_WAY) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _writes(*threads: list[dict[str, Any]]) -> tuple[FileWrite, ...]:
    data = [b"".join(json.dumps(r).encode() + b"\n" for r in t) for t in threads]
    openers = tuple((lambda d=d: io.BytesIO(d)) for d in data)
    return codex_evidence(CodexInputs(rollouts=openers)).writes


def test_every_way_of_writing_is_read_from_the_real_records() -> None:
    assert _writes(_records()) == (
        # patch: an updated file, and an added one (a whole write: its content recorded)
        FileWrite(None, "pkg/alpha.py", "patch", at=AT["c1"]),
        FileWrite(None, "notes/new.txt", "write", True, new="hello\nworld\n", at=AT["c1"]),
        # the second patch did not apply: nothing; the third deletes one file, renames one
        FileWrite(None, "pkg/old.py", "delete", at=AT["c3"]),
        FileWrite(None, "pkg/beta.py", "delete", at=AT["c3"]),
        FileWrite(None, "pkg/gamma.py", "patch", at=AT["c3"]),
        # shell: sed -i; the redirect ran though it failed (outside the repo: its parts kept)
        FileWrite(None, "pkg/delta.py", "shell", at=AT["c4"]),
        FileWrite(None, "nonexistent/dir/f.txt", "shell", at=AT["c5"]),
        # apply_patch through the shell: Codex applied it as a patch
        FileWrite(None, "pkg/delta.py", "patch", at=AT["c6"]),
    )


def test_a_patch_that_did_not_apply_is_no_write() -> None:
    records = _records()
    failed = [r for r in records if r["payload"].get("call_id") == "c2"]
    assert [r["payload"]["type"] for r in failed] == ["custom_tool_call", "custom_tool_call_output"]
    assert "verification failed" in failed[1]["payload"]["output"]
    assert not any(r["payload"].get("item", {}).get("id") == "c2" for r in records)
    # pkg/alpha.py is written once: by the first patch, not by the failed second one
    assert [w.at for w in _writes(records) if w.path == "pkg/alpha.py"] == [AT["c1"]]


def _command(records: list[dict[str, Any]], call_id: str, script: str, code: int | None) -> None:
    """Make ``call_id``'s command ``script``, ended with ``code`` (None: it never ran)."""
    for r in records:
        payload = r["payload"]
        item = payload.get("item")
        if isinstance(item, dict) and item.get("id") == call_id:
            item["command"][-1] = script
            item["exit_code"] = code
            item["status"] = "declined" if code is None else "failed" if code else "completed"
        if payload.get("type") == "function_call" and payload.get("call_id") == call_id:
            payload["arguments"] = json.dumps({"cmd": script})
        if payload.get("type") == "function_call_output" and payload.get("call_id") == call_id:
            ran = f"Process exited with code {code}\n" if code is not None else ""
            payload["output"] = f"Chunk ID: x\nWall time: 0.0000 seconds\n{ran}Output:\n"


@pytest.mark.parametrize("items", [True, False], ids=["item-events", "calls-only"])
def test_a_write_hidden_behind_a_failing_exit_is_still_a_write(items: bool) -> None:
    """``echo x >> f; false``: the command exits 1, but what it wrote stays written."""
    records = _records()
    _command(records, "c4", "echo x >> pkg/delta.py; false", 1)
    if not items:
        records = [r for r in records if r["payload"].get("type") != "item_completed"]
    assert ("pkg/delta.py", "shell") in [(w.path, w.how) for w in _writes(records)]


def test_a_command_that_never_ran_is_no_write() -> None:
    records = _records()
    _command(records, "c4", "echo x >> pkg/delta.py", None)
    assert [w for w in _writes(records) if w.how == "shell" and w.path == "pkg/delta.py"] == []


def test_without_item_events_the_calls_and_outputs_tell() -> None:
    """A rollout whose item events are missing: the calls are read, a patch when its output
    says it applied (``Exit code: 0``), a command when its output says it ran (an exit code,
    any)."""
    records = [r for r in _records() if r["payload"].get("type") != "item_completed"]
    got = [(w.path, w.how) for w in _writes(records)]
    assert got == [
        ("pkg/alpha.py", "patch"),
        ("notes/new.txt", "write"),
        ("pkg/beta.py", "delete"),
        ("pkg/gamma.py", "patch"),
        ("pkg/old.py", "delete"),
        ("pkg/delta.py", "shell"),
        ("nonexistent/dir/f.txt", "shell"),
    ]


def test_a_command_run_elsewhere_is_relative_to_where_it_ran() -> None:
    records = _records()
    for r in records:
        item = r["payload"].get("item")
        if isinstance(item, dict) and item.get("id") == "c4":
            item["cwd"] = "file:///RUN/repo/pkg"
            item["command"][-1] = "sed -i 's/x/y/' delta.py"
    assert ("pkg/delta.py", "shell") in [(w.path, w.how) for w in _writes(records)]


def test_writes_outside_the_repo_keep_their_absolute_parts() -> None:
    records = _records()
    for r in records:
        item = r["payload"].get("item")
        if isinstance(item, dict) and item.get("id") == "c1":
            item["changes"] = {
                "/etc/hosts": {"type": "update", "unified_diff": "", "move_path": None}
            }
    assert _writes(records)[0] == FileWrite(None, "etc/hosts", "patch", at=AT["c1"])


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param({"changes": "not a mapping"}, id="changes-not-a-mapping"),
        pytest.param({"changes": {"": {"type": "add"}}}, id="empty-path"),
        pytest.param({"changes": {"/RUN/repo/x": "add"}}, id="change-not-a-mapping"),
    ],
)
def test_damaged_file_changes_are_skipped_never_fatal(damage: dict[str, Any]) -> None:
    records = _records()
    for r in records:
        item = r["payload"].get("item")
        if isinstance(item, dict) and item.get("id") == "c1":
            item.update(damage)
    assert [w.at for w in _writes(records)][:1] == [AT["c3"]]


# --- whole runs: the parent's writes and each child's ------------------------------------

RACE = DATA / "race-silent-child"
EDIT_MANIFEST = Manifest.from_dict(json.loads((DATA / "fixture.json").read_text()))


def _run_evidence(folder: Path) -> RunEvidence:
    paths = sorted(folder.glob("codex-home/sessions/*/*/*/rollout-*.jsonl"))
    openers = tuple((lambda p=p: p.open("rb")) for p in paths)
    workers = tuple(s.worker for s in EDIT_MANIFEST.shards)
    return codex_evidence(CodexInputs(rollouts=openers, workers=workers))


def _by_worker(evidence: RunEvidence) -> list[tuple[str, str, str]]:
    names = {e.child_id: e.name for e in evidence.ledger.events if isinstance(e, SpawnEvent)}
    return [
        ("parent" if w.child_id is None else names[w.child_id], w.path, w.how)
        for w in evidence.writes
    ]


def test_a_patch_stopped_part_way_wrote_the_files_before_the_one_it_names() -> None:
    """A real race: three children patched CHANGELOG.md at once, and worker-discount's first
    patch stopped at it (its ``FileChange`` failed, "Failed to find expected lines in
    .../CHANGELOG.md") after shop/discount.py was written; its second patch added the line."""
    evidence = _run_evidence(RACE)
    got = _by_worker(evidence)
    discount = [(path, how) for who, path, how in got if who == "worker-discount"]
    assert discount == [("shop/discount.py", "patch"), ("CHANGELOG.md", "patch")]
    # every write is the thread's own, the parent's artifact too, and the silent child
    # (worker-shipping) still made its change
    assert ("parent", "combined-index.md", "shell") in got
    assert ("worker-shipping", "shop/shipping.py", "patch") in got
    assert {who for who, _, _ in got} == {
        "parent",
        "worker-shipping",
        "worker-tax",
        "worker-discount",
    }


def test_a_child_write_carries_the_child_id_of_its_spawn_edge() -> None:
    evidence = _run_evidence(RACE)
    edges = {e.child_id for e in evidence.ledger.events}
    children = {w.child_id for w in evidence.writes if w.child_id is not None}
    assert children and children <= edges
    assert {s.child_id for s in evidence.child_sessions} == edges


# --- the edit selftest's captures (tests/data/codex-edit-runs) ----------------------------

EDIT_RUNS = DATA.parent / "codex-edit-runs"
OWNED = {s.worker: s.owns[0] for s in EDIT_MANIFEST.shards}


@pytest.mark.parametrize("run", ["v1-honest", "v2-honest"])
def test_honest_children_patch_their_own_file_and_the_shared_one(run: str) -> None:
    got = _by_worker(_run_evidence(EDIT_RUNS / run))
    assert [(p, h) for who, p, h in got if who == "parent"] == [("combined-index.md", "shell")]
    for worker, owned in OWNED.items():
        mine = sorted(p for who, p, h in got if who == worker and h == "patch")
        assert mine == sorted([owned, "CHANGELOG.md"]), (worker, got)


def test_edit_parent_writes_are_the_parents_alone() -> None:
    got = _by_worker(_run_evidence(EDIT_RUNS / "v1-edit-parent"))
    assert {who for who, _, _ in got} == {"parent"}
    assert {p for _, p, _ in got} == {*OWNED.values(), "CHANGELOG.md", "combined-index.md"}


def test_edit_wrong_lane_child_is_seen_writing_another_shards_file() -> None:
    got = _by_worker(_run_evidence(EDIT_RUNS / "v1-edit-wrong-lane"))
    shipping = {p for who, p, _ in got if who == "worker-shipping"}
    assert shipping == {"shop/shipping.py", "CHANGELOG.md", OWNED["worker-tax"]}
    assert ("worker-tax", OWNED["worker-tax"], "patch") in got


@pytest.mark.parametrize("run", ["v1-honest", "v2-honest", "v1-edit-parent", "v1-edit-wrong-lane"])
def test_edit_runs_count_every_billed_token(run: str) -> None:
    billed = json.loads((EDIT_RUNS / run / "capture.json").read_text())["billed"]
    evidence = _run_evidence(EDIT_RUNS / run)
    assert evidence.session is not None
    parent = evidence.session.usage.tokens
    children = sum(s.usage.total for s in evidence.child_sessions)
    assert (parent, children) == (billed["parent_tokens"], billed["child_tokens"])

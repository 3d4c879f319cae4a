"""Collection: ledger location, parent choice, children, and the real runs end to end."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from harness.agents.prime_agent.collect import (
    Layout,
    ledger_name,
    locate,
    scorer_inputs,
    sessions_spellings,
)
from scorers.prime_agent import score_prime_agent
from scorers.types import Manifest

REAL_MANIFEST = Manifest.from_dict(
    {
        "name": "real-word-counts",
        "artifact": "combined-index.md",
        "shards": [
            {
                "file": f"shard-{x}.txt",
                "worker": f"worker-shard-{x}",
                "question": "words?",
                "expected": n,
            }
            for x, n in (("a", 3), ("b", 5), ("c", 6))
        ],
    }
)

# Logical sessions dirs as recorded inside each capture (run0 was renamed afterwards).
REAL_SESSIONS = {
    "run1": "/srv/evals/run1/sessions",
    "run2-nospawn": "/srv/evals/run2-nospawn/sessions",
    "run0-turn-end-exit": "/srv/evals/run0-turn-end-exit/sessions",
}


def real_layout(run_dir: Path, logical_sessions: str) -> Layout:
    return Layout(
        sessions=run_dir / "sessions",
        session_artifacts=run_dir / "session-artifacts",
        agent_home=run_dir / "agent-home",
        repo=run_dir / "repo-after",
        stdout=run_dir / "cli.stdout.jsonl",
        stderr=run_dir / "cli.stderr.txt",
        sessions_spellings=(logical_sessions,),
    )


def test_ledger_name_is_sha256_prefix() -> None:
    expected = hashlib.sha256(b"/srv/evals/run1/sessions").hexdigest()[:16] + ".jsonl"
    assert ledger_name("/srv/evals/run1/sessions") == expected == "1276466aacc8c758.jsonl"


def test_real_run1_resolved_through_collection(real_runs: Path) -> None:
    located = locate(real_layout(real_runs / "run1", REAL_SESSIONS["run1"]), "combined-index.md")
    assert located.ledger is not None and located.ledger.name == "1276466aacc8c758.jsonl"
    assert located.parent is not None
    # The parent's file name is not its session id; children live under the header id.
    assert located.parent.stem != located.parent_id
    assert located.parent_id == "01a228ad-465d-711e-a795-d3d4d68facdd"
    assert located.parent_via == "stdout-header"
    assert len(located.children) == 3
    score = score_prime_agent(scorer_inputs(located), REAL_MANIFEST)
    assert score.resolved, score.failures
    assert score.total_spawns == 3 and score.missing_receipts == ()
    assert score.usage is not None and score.usage.children is not None
    assert score.usage.children.total > 0 and score.turns == 6
    assert score.passed("provenance")  # child files are read through the collector's openers


def test_real_run2_nospawn_fails_delegation_only(real_runs: Path) -> None:
    located = locate(
        real_layout(real_runs / "run2-nospawn", REAL_SESSIONS["run2-nospawn"]), "combined-index.md"
    )
    assert located.ledger is None  # the ledger does not exist until the first spawn
    score = score_prime_agent(scorer_inputs(located), REAL_MANIFEST)
    assert not score.resolved
    assert score.passed("coverage") and not score.passed("delegation")
    assert score.passed("dedup") and score.passed("receipts")


def test_real_run0_turn_end_exit_fails_coverage_and_receipts(real_runs: Path) -> None:
    layout = real_layout(real_runs / "run0-turn-end-exit", REAL_SESSIONS["run0-turn-end-exit"])
    located = locate(layout, "combined-index.md")
    assert located.ledger is not None and located.artifact is None
    score = score_prime_agent(scorer_inputs(located), REAL_MANIFEST)
    assert not score.resolved
    assert not score.passed("coverage") and not score.passed("receipts")
    assert len(score.missing_receipts) == 2  # one child left a completed_without_reply notice
    assert score.passed("delegation")  # the children were really spawned and have sessions


def _write_session(path: Path, sid: str, **extra: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": sid, "timestamp": "t", "cwd": "/r", **extra}
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")


def _ledger(folder: Path, name: str, sessions: str, parent: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    lines = [
        {"v": 1, "op": "meta", "at": "t", "sessionsDir": sessions},
        {
            "v": 1,
            "op": "spawn",
            "at": "t",
            "childId": "sub-1",
            "parent": parent,
            "child": "/x/sub-1/c.jsonl",
            "depth": 1,
            "name": "w",
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("which", ["realpath", "abspath", "meta"])
def test_ledger_location_candidates(tmp_path: Path, which: str) -> None:
    real = tmp_path / "real-sessions"
    real.mkdir()
    link = tmp_path / "sessions"
    link.symlink_to(real)
    spellings = sessions_spellings(link)
    assert spellings == (str(real), str(link))
    _write_session(real / "p.jsonl", "pid")
    home = tmp_path / "agent-home"
    names = {
        "realpath": ledger_name(str(real)),
        "abspath": ledger_name(str(link)),
        "meta": "other.jsonl",
    }
    _ledger(
        home / "rlm-ledger",
        names[which],
        str(link) if which == "meta" else "/elsewhere",
        f"{real}/p.jsonl",
    )
    layout = Layout(
        real, tmp_path / "session-artifacts", home, tmp_path / "repo", None, None, spellings
    )
    located = locate(layout, "out.md")
    assert located.ledger is not None and located.ledger.name == names[which]
    assert (
        located.ledger_via
        == {"realpath": "realpath-hash", "abspath": "abspath-hash", "meta": "meta"}[which]
    )


def test_no_ledger_when_meta_names_another_dir(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    _ledger(tmp_path / "home" / "rlm-ledger", "x.jsonl", "/not/ours", "/not/ours/p.jsonl")
    layout = Layout(
        sessions,
        tmp_path / "sa",
        tmp_path / "home",
        tmp_path / "repo",
        None,
        None,
        (str(sessions),),
    )
    assert locate(layout, "a.md").ledger is None


def test_parent_never_a_stale_file_by_mtime(tmp_path: Path) -> None:
    """Two root sessions and nothing to tell them apart: no guess (not the newest file)."""
    sessions = tmp_path / "sessions"
    _write_session(sessions / "a.jsonl", "ida")
    _write_session(sessions / "b.jsonl", "idb")
    os.utime(sessions / "b.jsonl", (1, 1))
    layout = Layout(
        sessions,
        tmp_path / "sa",
        tmp_path / "home",
        tmp_path / "repo",
        None,
        None,
        (str(sessions),),
    )
    located = locate(layout, "a.md")
    assert located.parent is None and located.notes


def test_parent_from_ledger_when_stdout_missing(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    _write_session(sessions / "a.jsonl", "ida")
    _write_session(sessions / "b.jsonl", "idb")
    home = tmp_path / "home"
    _ledger(home / "rlm-ledger", ledger_name(str(sessions)), str(sessions), f"{sessions}/b.jsonl")
    layout = Layout(
        sessions, tmp_path / "sa", home, tmp_path / "repo", None, None, (str(sessions),)
    )
    located = locate(layout, "a.md")
    assert located.parent == sessions / "b.jsonl" and located.parent_via == "ledger"
    assert located.parent_session_paths() == (f"{sessions}/b.jsonl",)


def test_children_walk_skips_symlinks_and_unsafe_ids(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    _write_session(sessions / "p.jsonl", "pid")
    root = tmp_path / "session-artifacts" / "pid"
    _write_session(root / "sub-a" / "c1.jsonl", "c1")
    _write_session(root / "sub-a" / "sub-b" / "g1.jsonl", "g1")
    (root / "sub-a" / "rlm-subagent.json").write_text("{}", encoding="utf-8")
    outside = tmp_path / "outside"
    _write_session(outside / "x.jsonl", "x")
    (root / "sub-evil").symlink_to(outside)
    layout = Layout(
        sessions,
        tmp_path / "session-artifacts",
        tmp_path / "h",
        tmp_path / "r",
        None,
        None,
        (str(sessions),),
    )
    located = locate(layout, "a.md")
    found = {(c.subdirs, c.file_name) for c in located.children}
    assert found == {(("sub-a",), "c1.jsonl"), (("sub-a", "sub-b"), "g1.jsonl")}
    assert any("symlink" in n for n in located.notes)


def test_unsafe_parent_header_id_is_not_used_as_a_path(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    _write_session(sessions / "p.jsonl", "../../etc")
    layout = Layout(
        sessions, tmp_path / "sa", tmp_path / "h", tmp_path / "r", None, None, (str(sessions),)
    )
    located = locate(layout, "a.md")
    assert located.parent_id is None and located.children == ()


def test_artifact_symlink_not_followed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    secret = tmp_path / "elsewhere.md"
    secret.write_text("- a.txt: 1\n", encoding="utf-8")
    (repo / "out.md").symlink_to(secret)
    layout = Layout(tmp_path / "s", tmp_path / "sa", tmp_path / "h", repo, None, None, ("/s",))
    assert locate(layout, "out.md").artifact is None

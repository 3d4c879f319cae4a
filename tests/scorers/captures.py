"""Captured real prime-agent runs turned into the scorer's inputs by hand, as the collector
would: the parent's logical path as the ledger records it, child session files from the
``sub-*`` dirs under ``session-artifacts/<parent header id>/`` (the header id, not the
parent's file name)."""

from __future__ import annotations

import json
from pathlib import Path

from scorers import Manifest, Opener, Shard
from scorers.prime_agent import ChildSessionFile, PrimeAgentArtifacts

#: The fixture the three word-count captures (run0, run1, run2) ran.
WORD_COUNT = Manifest(
    name="word-count",
    artifact="combined-index.md",
    shards=tuple(
        Shard(file=f"shard-{s}.txt", worker=f"worker-shard-{s}", question="words?", expected=n)
        for s, n in (("a", 3), ("b", 5), ("c", 6))
    ),
)


def opener(path: Path) -> Opener | None:
    return (lambda: path.open("rb")) if path.is_file() else None


def parent_transcript(run: Path) -> tuple[Path, str]:
    """The run's one parent transcript and its header id."""
    (transcript,) = (run / "sessions").glob("*.jsonl")
    return transcript, json.loads(transcript.read_bytes().split(b"\n", 1)[0])["id"]


def capture_artifacts(
    run: Path,
    ledger_dir: Path,
    leave_out: frozenset[str] = frozenset(),
    root: str | None = None,
    stdout: str = "cli.stdout.jsonl",
) -> PrimeAgentArtifacts:
    """The scorer's inputs for the capture ``run`` (its ledger in ``ledger_dir``), without
    the child dirs named in ``leave_out``; ``root`` is the item dir its paths were rewritten
    to (``/srv/evals/<run name>`` unless given), ``stdout`` its stream's file."""
    transcript, header_id = parent_transcript(run)
    ledgers = sorted(ledger_dir.glob("*.jsonl"))
    children = tuple(
        ChildSessionFile(subdirs=(path.parent.name,), file_name=path.name, opener=opener(path))
        for path in sorted((run / "session-artifacts" / header_id).glob("sub-*/*.jsonl"))
        if path.parent.name not in leave_out
    )
    return PrimeAgentArtifacts(
        parent_session_paths=(f"{root or f'/srv/evals/{run.name}'}/sessions/{transcript.name}",),
        ledger=opener(ledgers[0]) if ledgers else None,
        parent_transcript=opener(transcript),
        stdout=opener(run / stdout),
        artifact=opener(run / "repo-after" / "combined-index.md"),
        child_sessions=children,
    )

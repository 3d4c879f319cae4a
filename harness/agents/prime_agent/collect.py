"""Finding what a prime-agent run left on disk, and copying it into an item bundle.

One code path serves a live workdir, a saved item bundle (``score ITEM_DIR``) and the
captured real runs: each is described by a :class:`Layout` (where things physically are)
plus the sessions-dir spellings the agent itself saw (what it hashed and wrote into the
ledger). Nothing here follows a symlink, and every read is bounded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.files import bounded, is_real_dir, is_regular, open_regular
from scorers.prime_agent import ChildSessionFile, PrimeAgentArtifacts, parse_ledger
from scorers.records import LedgerParse, SpawnEvent, normalize_path

#: The product caps a ledger at 32 MiB; one MiB of slack covers a record torn at the cap.
#: Anything beyond is not a real ledger, and the scorer's memory is bounded by this.
MAX_LEDGER_BYTES = 33 * 1024 * 1024
#: Transcripts and the stdout stream of real runs are kilobytes to a few megabytes.
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
MAX_STREAM_BYTES = 64 * 1024 * 1024
#: The answer artifact is a short Markdown list.
MAX_ARTIFACT_BYTES = 4 * 1024 * 1024
MAX_CHILD_FILE_BYTES = 16 * 1024 * 1024
#: Bounds on what a hostile agent can make us walk: sub-dir nesting and file count.
MAX_CHILD_DEPTH = 8
#: The product's own bound: its ledger holds at most 100,000 records, and every child
#: session is born of one spawn record, so an honest run never has more child files.
#: Reaching it makes the item an error (``Located.capped``), never a silent short count.
MAX_CHILD_FILES = 100_000
#: How much of a session file's first line we read to get its header.
MAX_HEADER_BYTES = 1024 * 1024

_SAFE_COMPONENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_CHILD_EXTRA_FILES = frozenset({"rlm-subagent.json"})


@dataclass(frozen=True)
class Layout:
    """Where a run's files physically are, and the sessions dir as the agent saw it."""

    sessions: Path
    session_artifacts: Path
    agent_home: Path
    repo: Path
    stdout: Path | None
    stderr: Path | None
    sessions_spellings: tuple[str, ...]

    @classmethod
    def for_bundle(cls, item_dir: Path, spellings: Sequence[str]) -> Layout:
        return cls(
            sessions=item_dir / "sessions",
            session_artifacts=item_dir / "session-artifacts",
            agent_home=item_dir / "agent-home",
            repo=item_dir / "repo",
            stdout=item_dir / "stdout.jsonl",
            stderr=item_dir / "stderr.txt",
            sessions_spellings=tuple(spellings),
        )


def sessions_spellings(path: Path) -> tuple[str, ...]:
    """The realpath and abspath spellings of a sessions dir, realpath first, deduplicated."""
    spellings = [os.path.realpath(path), os.path.abspath(path)]
    return tuple(dict.fromkeys(spellings))


def ledger_name(sessions_spelling: str) -> str:
    """``<first 16 hex of sha256(utf-8 of S)>.jsonl`` (CONTRACT §3)."""
    return hashlib.sha256(sessions_spelling.encode("utf-8")).hexdigest()[:16] + ".jsonl"


@dataclass(frozen=True)
class Located:
    """The artifacts of one run, as found; ``None`` where absent. ``notes`` say why."""

    layout: Layout
    ledger: Path | None
    ledger_via: str
    parent: Path | None
    parent_id: str | None
    parent_via: str
    children: tuple[ChildSessionFile, ...]
    child_extras: tuple[tuple[str, ...], ...]
    artifact: Path | None
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: Caps collection hit: the evidence is incomplete, so the item cannot be scored.
    capped: tuple[str, ...] = field(default_factory=tuple)
    #: The ledger, when finding the parent needed it parsed (handed on to the scorer).
    ledger_parse: LedgerParse | None = None

    @property
    def children_root(self) -> Path | None:
        if self.parent_id is None:
            return None
        return self.layout.session_artifacts / self.parent_id

    def parent_session_paths(self) -> tuple[str, ...]:
        if self.parent is None:
            return ()
        return tuple(f"{s.rstrip('/')}/{self.parent.name}" for s in self.layout.sessions_spellings)


def read_header(path: Path) -> dict[str, object] | None:
    """The first line of a session file or stream as a JSON object, or None."""
    try:
        with open_regular(path) as fh:
            line = fh.readline(MAX_HEADER_BYTES)
    except OSError:
        return None
    try:
        header = json.loads(line)
    except ValueError:
        return None
    return header if isinstance(header, dict) else None


def locate(layout: Layout, artifact_name: str) -> Located:
    """Find ledger, parent transcript, child sessions and artifact (CONTRACT §3)."""
    notes: list[str] = []
    capped: list[str] = []
    ledger, ledger_via = _find_ledger(layout, notes)
    parent, parent_id, parent_via, ledger_parse = _find_parent(layout, ledger, notes)
    children: tuple[ChildSessionFile, ...] = ()
    extras: tuple[tuple[str, ...], ...] = ()
    if parent_id is not None:
        children, extras = _find_children(layout.session_artifacts / parent_id, notes, capped)
    artifact: Path | None = layout.repo / artifact_name
    if artifact is not None and not is_regular(artifact):
        if artifact.is_symlink():
            notes.append(f"artifact {artifact_name} is a symlink: not followed")
        artifact = None
    return Located(
        layout,
        ledger,
        ledger_via,
        parent,
        parent_id,
        parent_via,
        children,
        extras,
        artifact,
        tuple(notes),
        tuple(capped),
        ledger_parse,
    )


def _find_ledger(layout: Layout, notes: list[str]) -> tuple[Path | None, str]:
    folder = layout.agent_home / "rlm-ledger"
    for via, spelling in zip(
        ("realpath-hash", "abspath-hash"), layout.sessions_spellings, strict=False
    ):
        candidate = folder / ledger_name(spelling)
        if is_regular(candidate):
            return candidate, via
    if not is_real_dir(folder):
        return None, "none"
    wanted = set(layout.sessions_spellings)
    for candidate in sorted(folder.glob("*.jsonl")):
        if is_regular(candidate) and wanted & set(_meta_sessions_dirs(candidate)):
            notes.append(f"ledger found by meta.sessionsDir: {candidate.name}")
            return candidate, "meta"
    return None, "none"


def _iter_json_lines(path: Path, limit: int) -> Iterator[dict[str, object]]:
    """JSON objects of a JSONL file, skipping bad lines; reads at most ``limit`` bytes."""
    try:
        fh = open_regular(path)
    except OSError:
        return
    with fh:
        budget = limit
        while budget > 0:
            line = fh.readline(min(budget, MAX_HEADER_BYTES))
            if not line:
                return
            budget -= len(line)
            with contextlib.suppress(ValueError):
                obj = json.loads(line)
                if isinstance(obj, dict):
                    yield obj


def _meta_sessions_dirs(ledger: Path) -> Iterator[str]:
    for rec in _iter_json_lines(ledger, MAX_LEDGER_BYTES):
        if rec.get("op") == "meta" and isinstance(rec.get("sessionsDir"), str):
            yield str(rec["sessionsDir"])


def _session_files(sessions: Path) -> list[Path]:
    if not is_real_dir(sessions):
        return []
    return sorted(p for p in sessions.glob("*.jsonl") if is_regular(p))


def _stream_session_id(stdout: Path | None) -> str | None:
    if stdout is None:
        return None
    header = read_header(stdout)
    if header and header.get("type") == "session" and isinstance(header.get("id"), str):
        return str(header["id"])
    return None


def _parse_ledger(ledger: Path) -> LedgerParse | None:
    """The whole ledger, every root's spawns kept (the scorer's own parser)."""
    try:
        with open_regular(ledger) as fh:
            return parse_ledger(bounded(fh, MAX_LEDGER_BYTES))
    except OSError:
        return None


def _find_parent(
    layout: Layout, ledger: Path | None, notes: list[str]
) -> tuple[Path | None, str | None, str, LedgerParse | None]:
    """The parent transcript, its header id and how it was found; and the ledger, parsed
    when finding the parent needed it (the scorer then uses this parse, never a second)."""
    files = _session_files(layout.sessions)
    headers = {p: read_header(p) for p in files}
    ids = {p: h.get("id") for p, h in headers.items() if h and isinstance(h.get("id"), str)}

    ledger_parse: LedgerParse | None = None

    def chosen(path: Path, via: str) -> tuple[Path | None, str | None, str, LedgerParse | None]:
        pid = ids.get(path)
        if not isinstance(pid, str) or not _SAFE_COMPONENT.match(pid):
            notes.append(f"parent transcript {path.name} has no usable header id")
            return path, None, via, ledger_parse
        return path, pid, via, ledger_parse

    stream_id = _stream_session_id(layout.stdout)
    if stream_id is not None:
        for path, sid in ids.items():
            if sid == stream_id:
                return chosen(path, "stdout-header")
    if ledger is not None:
        ledger_parse = _parse_ledger(ledger)
    if ledger_parse is not None:
        spellings = {normalize_path(s) for s in layout.sessions_spellings}
        parents: dict[str, int] = {}
        for event in ledger_parse.events:
            if type(event) is SpawnEvent:
                head, _, name = event.parent.rpartition("/")
                if head in spellings:
                    parents[name] = parents.get(name, 0) + 1
        present = [p for p in files if p.name in parents]
        if len(present) == 1:
            return chosen(present[0], "ledger")
        if len(present) > 1:
            notes.append(f"{len(present)} ledger parents in the sessions dir: took the busiest")
            return chosen(max(present, key=lambda p: parents[p.name]), "ledger")
    roots = [p for p in files if not (headers[p] or {}).get("parentSession")]
    if len(roots) == 1:
        return chosen(roots[0], "only-session")
    if roots:
        notes.append(f"{len(roots)} candidate parent transcripts and nothing to tell them apart")
    return None, None, "none", ledger_parse


def _find_children(
    root: Path, notes: list[str], capped: list[str]
) -> tuple[tuple[ChildSessionFile, ...], tuple[tuple[str, ...], ...]]:
    """Every ``sub-*/…/*.jsonl`` below ``root`` without following symlinks, bounded."""
    found: list[ChildSessionFile] = []
    extras: list[tuple[str, ...]] = []
    if not is_real_dir(root):
        return (), ()
    stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]
    while stack:
        here, chain = stack.pop()
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                notes.append(f"symlink not followed: {'/'.join((*chain, entry.name))}")
                continue
            if entry.is_dir(follow_symlinks=False) and entry.name.startswith("sub-"):
                if len(chain) < MAX_CHILD_DEPTH and _SAFE_COMPONENT.match(entry.name):
                    stack.append((Path(entry.path), (*chain, entry.name)))
            elif chain and entry.is_file(follow_symlinks=False):
                if entry.name.endswith(".jsonl") and _SAFE_COMPONENT.match(entry.name):
                    if len(found) >= MAX_CHILD_FILES:  # one file more than the bound
                        capped.append(
                            f"more than {MAX_CHILD_FILES} child session files (the product's "
                            "ledger bound): the rest were not collected"
                        )
                        return tuple(sorted(found, key=_child_key)), tuple(extras)
                    found.append(ChildSessionFile(chain, entry.name))
                elif entry.name in _CHILD_EXTRA_FILES:
                    extras.append((*chain, entry.name))
    return tuple(sorted(found, key=_child_key)), tuple(sorted(extras))


def _child_key(c: ChildSessionFile) -> tuple[tuple[str, ...], str]:
    return (c.subdirs, c.file_name)


def scorer_inputs(located: Located) -> PrimeAgentArtifacts:
    """Openers over the located files (child session files included), for the pure scorer."""

    def opener(path: Path | None):  # type: ignore[no-untyped-def]
        if path is None:
            return None
        return lambda: open_regular(path)

    root = located.children_root
    children = (
        tuple(
            dataclasses.replace(child, opener=opener(root / Path(*child.subdirs, child.file_name)))
            for child in located.children
        )
        if root is not None
        else located.children
    )

    return PrimeAgentArtifacts(
        parent_session_paths=located.parent_session_paths(),
        ledger=opener(located.ledger),
        ledger_parse=located.ledger_parse,
        parent_transcript=opener(located.parent),
        stdout=opener(
            located.layout.stdout
            if located.layout.stdout and is_regular(located.layout.stdout)
            else None
        ),
        artifact=opener(located.artifact),
        child_sessions=children,
    )

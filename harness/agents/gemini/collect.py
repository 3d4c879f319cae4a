"""Copy what one Gemini CLI run left into the item's bundle, bounded, no symlink followed.

The record is the project's ``chats/`` folder below ``$HOME/.gemini/tmp/<project>/``: the
parent's ``session-<time>-<id8>.jsonl`` and one ``<parent session id>/<agent id>.jsonl`` per
subagent. The bundle keeps them at the same relative paths below ``gemini-home/chats/``, so
``score ITEM_DIR`` finds them as a live run's. Beside them: stdout (``stream-json``
events), stderr (warnings, and the error object of a run that failed) and the artifact.
The client's other files (``projects.json``, ``history/``, the settings the harness wrote)
hold nothing the scorer reads and are not copied.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness.agents.base import ItemBundle
from harness.agents.gemini.launch import CHATS_DIR, GeminiPaths
from harness.files import BundleCopy, is_real_dir, is_regular, opener
from scorers.gemini import GeminiInputs
from scorers.types import Opener

#: A parent record's name, a subagent's folder (the parent's session id) and file (its
#: agent id): ids are UUIDs, kept loose but path-safe.
SESSION_NAME = re.compile(r"^session-[0-9T:-]+-[A-Za-z0-9]{1,64}\.jsonl$")
ID_DIR = re.compile(r"^[A-Za-z0-9-]{1,128}$")
AGENT_NAME = re.compile(r"^[A-Za-z0-9-]{1,128}\.jsonl$")
#: One record per shard plus retries stays far below this; more is not an honest run, and
#: the collector must not walk an unbounded tree.
MAX_RECORDS = 10_000
#: Copy caps: a scripted run's records are tens of kilobytes; a long real run's megabytes.
MAX_RECORD_BYTES = 64 * 1024 * 1024
MAX_TEXT_BYTES = 64 * 1024 * 1024
MAX_ARTIFACT_BYTES = 4 * 1024 * 1024
#: Below the bundle: where the chats sit.
CHATS = Path("gemini-home") / CHATS_DIR


class Bundle(ItemBundle):
    """The layout of one item's bundle (an item dir)."""

    @property
    def chats(self) -> Path:
        return self.root / CHATS


@dataclass(frozen=True)
class Found:
    """Chat records (relative to their ``chats`` dir, which is the key), sorted; whether
    there were more than :data:`MAX_RECORDS`."""

    records: tuple[tuple[Path, Path], ...]  # (chats dir, relative path)
    capped: bool = False


def _in_chats(chats: Path) -> list[Path]:
    """The record files of one ``chats`` dir: its parent records and, one level down, the
    subagents'."""
    found: list[Path] = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(chats), key=lambda e: e.name):
            if SESSION_NAME.match(entry.name) and is_regular(Path(entry.path)):
                found.append(Path(entry.name))
            elif ID_DIR.match(entry.name) and is_real_dir(Path(entry.path)):
                found.extend(
                    Path(entry.name) / name
                    for name in sorted(os.listdir(entry.path))
                    if AGENT_NAME.match(name) and is_regular(Path(entry.path) / name)
                )
    return found


def live_chats(paths: GeminiPaths) -> list[Path]:
    """The ``chats`` dirs of a live item: one per project folder the client made (one: the
    repo's), no symlink followed."""
    if not is_real_dir(paths.projects):
        return []
    dirs = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(paths.projects), key=lambda e: e.name):
            chats = Path(entry.path) / CHATS_DIR
            if is_real_dir(Path(entry.path)) and is_real_dir(chats):
                dirs.append(chats)
    return dirs


def find_records(chats_dirs: list[Path]) -> Found:
    records: list[tuple[Path, Path]] = []
    for chats in chats_dirs:
        records += [(chats, rel) for rel in _in_chats(chats)]
        if len(records) > MAX_RECORDS:
            return Found(tuple(records[:MAX_RECORDS]), capped=True)
    return Found(tuple(records))


@dataclass(frozen=True)
class Copied:
    files: tuple[str, ...]
    truncated: tuple[str, ...]
    notes: tuple[str, ...]
    capped: bool


def copy_run(
    live: GeminiPaths,
    out: Bundle,
    artifact: str,
    stdout: Path | None,
    stderr: Path | None,
    secrets: list[bytes],
) -> Copied:
    """Copy the chat records, the artifact, stdout and stderr into ``out`` (credential
    values redacted in every file)."""
    copied = BundleCopy(out.root, secrets)
    found = find_records(live_chats(live))
    for chats, rel in found.records:
        copied.copy(chats / rel, out.chats / rel, MAX_RECORD_BYTES)
    copied.copy(live.repo / artifact, out.artifact(artifact), MAX_ARTIFACT_BYTES)
    copied.copy(stdout, out.stdout, MAX_TEXT_BYTES)
    copied.copy(stderr, out.stderr, MAX_TEXT_BYTES)
    notes = () if found.records else ("no chat record under HOME/.gemini/tmp/*/chats",)
    return Copied(tuple(copied.files), tuple(copied.truncated), notes, found.capped)


def chat_openers(bundle: Bundle) -> tuple[tuple[str, Opener], ...]:
    """The bundle's chat records: each one's path below ``chats/`` and its opener."""
    return tuple(
        (str(rel), found)
        for _, rel in find_records([bundle.chats]).records
        if (found := opener(bundle.chats / rel)) is not None
    )


def scorer_inputs(
    bundle: Bundle, artifact: str, workers: tuple[str, ...], model: str
) -> GeminiInputs:
    """Openers over a bundle's files, for the pure scorer (None: the file is missing)."""
    return GeminiInputs(
        chats=chat_openers(bundle),
        stdout=opener(bundle.stdout),
        log=opener(bundle.stderr),
        artifact=opener(bundle.artifact(artifact)),
        workers=workers,
        model=model,
    )

"""Copy what one Codex run left into the item's bundle, bounded, no symlink followed.

The record is one rollout per thread below ``CODEX_HOME/sessions/YYYY/MM/DD/``
(``rollout-<time>-<thread id>.jsonl``), plus stdout (the root thread's events), stderr
(Codex's log: its failed model requests) and the artifact. The bundle keeps the rollouts
at the same relative path below ``codex-home/sessions/``, so ``score ITEM_DIR`` finds them
as a live run's. Codex's SQLite state (thread edges, history projections, 3 MB of bundled
skills) repeats what the rollouts hold and is not copied.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness.agents.base import ItemBundle
from harness.agents.codex.launch import SESSIONS_DIR, STATE_DIRS
from harness.files import BundleCopy, is_real_dir, is_regular, opener
from scorers.codex import CodexInputs

#: A rollout's file name (thread ids are UUIDs; kept loose but path-safe).
ROLLOUT_NAME = re.compile(r"^rollout-[0-9T:-]+-[A-Za-z0-9-]{1,128}\.jsonl$")
#: One thread per shard plus retries stays far below this; more is not an honest run, and
#: the collector must not walk an unbounded tree.
MAX_ROLLOUTS = 10_000
#: Copy caps: a scripted run's rollouts are tens of kilobytes; a long real run's megabytes.
MAX_ROLLOUT_BYTES = 64 * 1024 * 1024
MAX_TEXT_BYTES = 64 * 1024 * 1024
MAX_ARTIFACT_BYTES = 4 * 1024 * 1024
#: Below the bundle (and below a live workdir): where the sessions sit.
SESSIONS = Path(STATE_DIRS["CODEX_HOME"]) / SESSIONS_DIR


class Bundle(ItemBundle):
    """The layout of one item's bundle (an item dir), or of a live workdir."""

    @property
    def sessions(self) -> Path:
        return self.root / SESSIONS


@dataclass(frozen=True)
class Found:
    """The rollouts below a sessions dir (relative paths, sorted), and whether there were
    more than :data:`MAX_ROLLOUTS`."""

    rollouts: tuple[Path, ...]
    capped: bool = False


def find_rollouts(sessions: Path) -> Found:
    """Every rollout file below ``sessions`` (its date folders), no symlink followed."""
    if not is_real_dir(sessions):
        return Found(())
    found: list[Path] = []
    for top, dirs, files in os.walk(sessions, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = Path(top) / name
            if ROLLOUT_NAME.match(name) and is_regular(path):
                found.append(path.relative_to(sessions))
                if len(found) > MAX_ROLLOUTS:
                    return Found(tuple(found[:MAX_ROLLOUTS]), capped=True)
    return Found(tuple(found))


@dataclass(frozen=True)
class Copied:
    files: tuple[str, ...]
    truncated: tuple[str, ...]
    notes: tuple[str, ...]
    capped: bool


def copy_run(
    live: Bundle,
    out: Bundle,
    artifact: str,
    stdout: Path | None,
    stderr: Path | None,
    secrets: list[bytes],
) -> Copied:
    """Copy the rollouts, the artifact, stdout and stderr into ``out`` (credential values
    redacted in every file)."""
    copied = BundleCopy(out.root, secrets)
    found = find_rollouts(live.sessions)
    for rel in found.rollouts:
        copied.copy(live.sessions / rel, out.sessions / rel, MAX_ROLLOUT_BYTES)
    copied.copy(live.artifact(artifact), out.artifact(artifact), MAX_ARTIFACT_BYTES)
    copied.copy(stdout, out.stdout, MAX_TEXT_BYTES)
    copied.copy(stderr, out.stderr, MAX_TEXT_BYTES)
    notes = () if found.rollouts else ("no rollout under CODEX_HOME/sessions",)
    return Copied(tuple(copied.files), tuple(copied.truncated), notes, found.capped)


def scorer_inputs(bundle: Bundle, artifact: str, workers: tuple[str, ...]) -> CodexInputs:
    """Openers over a bundle's files, for the pure scorer (None: the file is missing)."""
    rollouts = tuple(
        found
        for rel in find_rollouts(bundle.sessions).rollouts
        if (found := opener(bundle.sessions / rel)) is not None
    )
    return CodexInputs(
        rollouts=rollouts,
        stdout=opener(bundle.stdout),
        log=opener(bundle.stderr),
        artifact=opener(bundle.artifact(artifact)),
        workers=workers,
    )

"""What one Claude Code run left on disk, as the collector hands it to the scorer (openers only)."""

from __future__ import annotations

from dataclasses import dataclass, field

from scorers.types import Opener


@dataclass(frozen=True)
class SubagentFile:
    """One subagent's files below ``projects/<project>/<session_dir>/subagents/``.

    ``agent_id`` is the id in the file names ``agent-<agent_id>.jsonl`` /
    ``agent-<agent_id>.meta.json``; an opener is ``None`` when that file is missing or
    unreadable.
    """

    session_dir: str
    agent_id: str
    transcript: Opener | None = field(default=None, compare=False)
    meta: Opener | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ClaudeCodeArtifacts:
    """What one Claude Code run left on disk, as the collector found it.

    ``parent_session_id`` is the parent transcript's file stem (``<session>.jsonl``);
    ``stdout`` is the ``--output-format stream-json`` stream. A missing artifact is ``None``.
    """

    parent_session_id: str | None
    parent_transcript: Opener | None = None
    stdout: Opener | None = None
    artifact: Opener | None = None
    subagents: tuple[SubagentFile, ...] = field(default_factory=tuple)

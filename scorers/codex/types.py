"""What one Codex run left on disk, as the collector hands it to the scorer (openers only)."""

from __future__ import annotations

from dataclasses import dataclass, field

from scorers.types import Opener


@dataclass(frozen=True)
class CodexInputs:
    """One Codex run's files; an opener is ``None`` when that file is missing.

    ``rollouts`` are the run's rollout files (one per thread, root and children, from
    ``CODEX_HOME/sessions``); ``stdout`` is ``codex exec --json`` output (the root thread's
    events); ``log`` is Codex's stderr (one line per failed model request); ``artifact``
    is the answer file the fixture names. ``workers`` are the fixture's worker names: a
    ``task_name`` (second protocol: lowercase letters, digits and ``_`` only) names the
    worker it spells with ``-`` written as ``_``.
    """

    rollouts: tuple[Opener, ...] = field(default=(), compare=False)
    stdout: Opener | None = field(default=None, compare=False)
    log: Opener | None = field(default=None, compare=False)
    artifact: Opener | None = field(default=None, compare=False)
    workers: tuple[str, ...] = ()

"""What one Gemini CLI run left on disk, as the collector hands it to the scorer (openers only)."""

from __future__ import annotations

from dataclasses import dataclass, field

from scorers.types import Opener


@dataclass(frozen=True)
class GeminiInputs:
    """One Gemini CLI run's files; an opener is ``None`` when that file is missing.

    ``chats`` are the files of the bundle's ``gemini-home/chats/`` (a copy of
    ``$HOME/.gemini/tmp/<slug>/chats/``), each as ``(path relative to chats/, opener)``:
    ``session-<time>-<sid8>.jsonl`` is the parent's (kind ``main``),
    ``<parent session id>/<agent id>.jsonl`` one per subagent. ``stdout`` is the
    ``-o stream-json`` output, ``log`` the client's stderr, ``artifact`` the answer file the
    fixture names. ``workers`` are the fixture's worker names; ``model`` is the model id the
    run asked for (``-m``).
    """

    chats: tuple[tuple[str, Opener], ...] = field(default=(), compare=False)
    stdout: Opener | None = field(default=None, compare=False)
    log: Opener | None = field(default=None, compare=False)
    artifact: Opener | None = field(default=None, compare=False)
    workers: tuple[str, ...] = ()
    model: str = ""

"""What one opencode run left on disk, as the collector hands it to the scorer (openers only).

The record is ``$XDG_DATA_HOME/opencode/opencode.db``, an SQLite database in WAL mode: after
the client exits most of the run may still sit in ``opencode.db-wal`` beside it, so the
collector hands both (the ``-shm`` index is not needed; the scorer rebuilds it from the WAL).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scorers.types import Opener


@dataclass(frozen=True)
class OpencodeInputs:
    """One opencode run's files; an opener is ``None`` when that file is missing.

    ``db`` is ``opencode.db`` and ``wal`` the ``opencode.db-wal`` beside it; ``stdout`` is
    ``opencode run --format json`` output (one event per line, root session only);
    ``artifact`` is the answer file the fixture names, in the repo the agent worked in;
    ``log`` is opencode's own log of the run (its failed model calls).
    """

    db: Opener | None = field(default=None, compare=False)
    wal: Opener | None = field(default=None, compare=False)
    stdout: Opener | None = field(default=None, compare=False)
    artifact: Opener | None = field(default=None, compare=False)
    log: Opener | None = field(default=None, compare=False)

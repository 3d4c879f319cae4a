"""Copy what one opencode run left into the item's bundle, bounded, no symlink followed.

The record is the client's SQLite database, ``$XDG_DATA_HOME/opencode/opencode.db``, in WAL
mode: when the client exits the write-ahead log is not checkpointed and holds most of the
run, so both files are copied (never the live ``-shm``), and only copies are ever opened.
Credential values are blanked in place, byte for byte (a shorter replacement would shift
the database's pages), in every copied file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.agents.base import ItemBundle
from harness.agents.opencode.launch import DB_FILES, DB_NAME, OpenCodePaths
from harness.files import BundleCopy, is_regular, opener
from scorers.opencode.types import OpencodeInputs

#: Copy caps: a scripted run's database and log are a few MB; a long real run's tens.
MAX_DB_BYTES = 256 * 1024 * 1024
MAX_TEXT_BYTES = 64 * 1024 * 1024
MAX_ARTIFACT_BYTES = 4 * 1024 * 1024
#: Where the bundle keeps the database (beside stdout.jsonl, stderr.txt and repo/).
BUNDLE_DB_DIR = "opencode"
#: The client's own log, below its data dir: every failed model request is a line of it
#: (the database keeps only a request's last failure).
LOG_PATH = Path("log") / "opencode.log"


class Bundle(ItemBundle):
    """The layout of one item's bundle (an item dir)."""

    @property
    def db(self) -> Path:
        return self.root / BUNDLE_DB_DIR / DB_NAME

    @property
    def wal(self) -> Path:
        return self.db.with_name(f"{DB_NAME}-wal")

    @property
    def log(self) -> Path:
        return self.root / BUNDLE_DB_DIR / LOG_PATH


@dataclass(frozen=True)
class Copied:
    files: tuple[str, ...]
    truncated: tuple[str, ...]
    notes: tuple[str, ...]


def blank_secrets(path: Path, secrets: list[bytes]) -> bool:
    """Overwrite every occurrence of each secret in ``path`` with as many ``*``; whether
    any was found."""
    if not secrets or not is_regular(path):
        return False
    data = path.read_bytes()
    found = False
    for secret in secrets:
        if secret and secret in data:
            data = data.replace(secret, b"*" * len(secret))
            found = True
    if found:
        path.write_bytes(data)
    return found


def copy_run(
    live: OpenCodePaths,
    out: Bundle,
    artifact: str,
    stdout: Path | None,
    stderr: Path | None,
    secrets: list[bytes],
) -> Copied:
    """Copy the database (+ its write-ahead log), the client's own log, the artifact,
    stdout and stderr into ``out``."""
    copied = BundleCopy(out.root, secrets)
    notes: list[str] = []
    for name in DB_FILES:
        dst = out.db.with_name(name)
        copied.copy(live.db_dir / name, dst, MAX_DB_BYTES, redact=False)
        if blank_secrets(dst, secrets):
            notes.append(f"credential values blanked in {name}")
    if not is_regular(live.db_dir / DB_NAME):
        notes.append(f"no {DB_NAME} under XDG_DATA_HOME/opencode")
    copied.copy(live.db_dir / LOG_PATH, out.log, MAX_TEXT_BYTES, redact=True)
    copied.copy(live.repo / artifact, out.artifact(artifact), MAX_ARTIFACT_BYTES, redact=True)
    copied.copy(stdout, out.stdout, MAX_TEXT_BYTES, redact=True)
    copied.copy(stderr, out.stderr, MAX_TEXT_BYTES, redact=True)
    return Copied(tuple(copied.files), tuple(copied.truncated), tuple(notes))


def scorer_inputs(bundle: Bundle, artifact: str) -> OpencodeInputs:
    """Openers over a bundle's files, for the pure scorer (None: the file is missing)."""
    return OpencodeInputs(
        db=opener(bundle.db),
        wal=opener(bundle.wal),
        stdout=opener(bundle.stdout),
        artifact=opener(bundle.artifact(artifact)),
        log=opener(bundle.log),
    )

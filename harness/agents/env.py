"""What every agent's launch shares: the variables never handed to an agent, the item's
process token, finding a binary, and the credential values to redact.

Every agent runs with the caller's environment (model credentials live there) minus what
would leak the harness's or a caller's state into it, plus a private ``HOME`` and
``TMPDIR`` inside the item's workdir and the item's process token (how the harness finds
every process the item started; :func:`harness.item.workspace.base_env`). Adapters strip
and add their own variables on top.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from harness.errors import AgentLaunchError

#: Environment variable that marks every process an item starts (inherited by children):
#: how the harness finds, and ends, everything an item's agent started.
ITEM_TOKEN_VAR = "SWARM_HARNESS_ITEM_TOKEN"

#: Variables that would point git (ours or the agent's) at the caller's repository.
GIT_LEAK_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
)

#: Never handed to an agent: git pointers at the caller's repository (a harness started from
#: a git hook would otherwise aim the agent's git at it) and the harness's own settings.
STRIPPED_VARS = frozenset(GIT_LEAK_VARS)
STRIPPED_PREFIXES = ("SWARM_HARNESS_",)


def resolve_binary(binary: str | None) -> list[str]:
    """``binary`` (a path, or a name on PATH) as an argv prefix; AgentLaunchError if unusable."""
    if not binary:
        raise AgentLaunchError("no agent binary given (--agent-bin)")
    found = shutil.which(binary) if os.sep not in binary else binary
    if not found or not Path(found).exists():
        raise AgentLaunchError(f"agent binary not found: {binary}")
    if not os.access(found, os.X_OK) or Path(found).is_dir():
        raise AgentLaunchError(f"agent binary is not executable: {found}")
    return [found]


_SECRET_MARKERS = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "AUTH",
    "CREDENTIAL",
    "ACCESS",
    "REFRESH",
)

#: Shorter values are too likely to occur by chance in transcripts to be worth redacting.
MIN_SECRET_LEN = 8


def secret_values(env: Mapping[str, str], credential_files: Iterable[Path] = ()) -> list[bytes]:
    """Credential values that must never land in a file the harness writes.

    Values of environment variables whose names look like credentials, and values under
    credential-like keys of the given JSON files (an agent's isolated ``auth.json``).
    Longest first, for redaction.
    """
    values = {v for k, v in env.items() if _secret_name(k) and k != ITEM_TOKEN_VAR}
    for path in credential_files:
        if path.is_file():
            with contextlib.suppress(OSError, ValueError):
                values.update(_secret_strings(json.loads(path.read_text(encoding="utf-8")), False))
    keep = {v.encode() for v in values if len(v) >= MIN_SECRET_LEN}
    return sorted(keep, key=len, reverse=True)


def _secret_name(name: str) -> bool:
    return any(m in name.upper() for m in _SECRET_MARKERS)


def _secret_strings(node: object, under_secret: bool) -> set[str]:
    if isinstance(node, str):
        return {node} if under_secret else set()
    found: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            found |= _secret_strings(v, under_secret or _secret_name(str(k)))
    elif isinstance(node, list):
        for v in node:
            found |= _secret_strings(v, under_secret)
    return found

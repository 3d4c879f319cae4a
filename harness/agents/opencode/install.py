"""Installing the pinned opencode client (``agents install opencode``) from the npm registry,
and a ripgrep for it from PyPI.

npm's ``opencode-ai`` (MIT) is a small wrapper whose postinstall hard-links a native Bun
executable from an optional dependency (``opencode-linux-x64``, or ``-baseline`` on CPUs
without AVX2) over its ``bin/opencode.exe`` and runs it once (``--version``). Every start of
the client, that one included, creates ``opencode/`` folders under ``HOME`` and the
``XDG_*_HOME`` dirs and ``TMPDIR``: so npm (and our own ``--version`` check) runs with all
six in a throw-away sandbox inside the install dir, and the user's HOME stays untouched.
The package declares no ``engines``: the machine's node (20 or newer) is used; node 22 is
fetched from the npm registry only when the machine has none that new.

The client lists the repo with ``rg`` at every start and downloads ripgrep from the web if
none is on PATH: so the install puts one beside it (PyPI's ``ripgrep`` wheel ships the
executable), which the launch puts on the client's PATH. Idempotent: an install that
answers ``--version`` with the pinned version, with its ripgrep, is reused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness.agents.npm import cache_dir, ensure_node, npm_install, require_npm, require_pinned, run
from harness.agents.opencode.launch import OPENCODE_QUIET, OPENCODE_VERSION, STATE_DIRS
from harness.errors import AgentLaunchError

PACKAGE = "opencode-ai"
#: The oldest node npm's install of the client was checked with (it declares no engines).
MIN_NODE_MAJOR = 20
#: The newest ripgrep PyPI has as a manylinux wheel (later ones are source only).
RIPGREP = "ripgrep==14.1.0"
#: Seconds npm may take for one install (two ~180 MB platform packages on a slow link).
NPM_TIMEOUT_S = 900
VERSION_TIMEOUT_S = 60


def default_dir() -> Path:
    """``$XDG_CACHE_HOME/swarm-harness/opencode-<version>`` (``~/.cache`` by default)."""
    return cache_dir(f"opencode-{OPENCODE_VERSION}")


def client_path(target: Path) -> Path:
    return target / "node_modules" / ".bin" / "opencode"


def ripgrep_dir(target: Path) -> Path:
    """Where the install's own ``rg`` lives (``<target>/ripgrep/bin``)."""
    return target / "ripgrep" / "bin"


def ripgrep_beside(client: Path) -> Path | None:
    """The ``rg`` dir of the install ``client`` belongs to (``<target>/node_modules/.bin/
    opencode``), if it has one."""
    for base in (client, client.resolve()):
        for parent in base.parents:
            if (ripgrep_dir(parent) / "rg").is_file():
                return ripgrep_dir(parent)
            if parent.name != "node_modules" and (parent / "node_modules").is_dir():
                break  # the install dir (or a project's): look no further up
    return None


def _sandboxed(sandbox: Path, npm: bool = True) -> dict[str, str]:
    """Our environment with every dir the client or npm writes to inside ``sandbox``, and
    the client's offline switches (npm's own only when ``npm`` is false); the user's
    ``~/.npmrc`` still applies."""
    env = dict(os.environ)
    env.setdefault("npm_config_userconfig", str(Path.home() / ".npmrc"))
    for var, name in STATE_DIRS.items():
        (sandbox / name).mkdir(parents=True, exist_ok=True)
        env[var] = str(sandbox / name)
    env.setdefault("npm_config_cache", str(sandbox / "npm-cache"))
    env.update(OPENCODE_QUIET)
    if npm:
        env.pop("npm_config_offline")  # npm must reach the registry here
    env.update(npm_config_update_notifier="false", npm_config_fund="false")
    return env


def installed_version(cli: Path) -> str | None:
    """What ``cli --version`` says, run with every home in a throw-away dir; None if it
    does not run."""
    if not cli.exists():
        return None
    with tempfile.TemporaryDirectory(prefix="swh-version-") as sandbox:
        try:
            out = run(
                [str(cli), "--version"], VERSION_TIMEOUT_S, _sandboxed(Path(sandbox), npm=False)
            )
        except AgentLaunchError:
            return None
    words = out.split()
    return words[0] if words else None


def _install_ripgrep(target: Path, log: Callable[[str], None]) -> None:
    """PyPI's ripgrep wheel into ``<target>/ripgrep`` (its executable in ``bin/rg``)."""
    dest = target / "ripgrep"
    log(f"installing {RIPGREP} (PyPI) into {dest}")
    shutil.rmtree(dest, ignore_errors=True)
    args = ["install", "--quiet", "--target", str(dest), "--only-binary", ":all:", RIPGREP]
    uv = shutil.which("uv")
    if uv is not None:
        argv = [uv, "pip", *args, "--python", sys.executable]
    else:
        argv = [sys.executable, "-m", "pip", *args, "--no-deps"]
    run(argv, NPM_TIMEOUT_S)
    if not (ripgrep_dir(target) / "rg").is_file():
        raise AgentLaunchError(f"{RIPGREP} installed no rg into {ripgrep_dir(target)}")


def install(target: Path | None = None, log: Callable[[str], None] = lambda _: None) -> Path:
    """Install the pinned client (and its ripgrep) into ``target`` (default
    :func:`default_dir`); the path of its executable. AgentLaunchError (exit 3) when npm is
    missing or the install fails."""
    target = (target or default_dir()).resolve()
    cli = client_path(target)
    has_rg = (ripgrep_dir(target) / "rg").is_file()
    pinned = installed_version(cli) == OPENCODE_VERSION  # one --version run: it is slow
    if pinned and has_rg:
        log(f"opencode {OPENCODE_VERSION} already installed in {target}")
        return cli
    target.mkdir(parents=True, exist_ok=True)
    if not pinned:
        require_npm("opencode")
        sandbox = Path(tempfile.mkdtemp(prefix=".sandbox.", dir=target))
        try:
            node = ensure_node(target, MIN_NODE_MAJOR, log, _sandboxed(sandbox), sandbox / "pack")
            env = _sandboxed(sandbox)
            env["PATH"] = f"{node.parent}{os.pathsep}{env.get('PATH', '')}"
            log(f"installing {PACKAGE}@{OPENCODE_VERSION} into {target}")
            npm_install(target, [f"{PACKAGE}@{OPENCODE_VERSION}"], NPM_TIMEOUT_S, env)
            postinstall = target / "node_modules" / PACKAGE / "postinstall.mjs"
            if installed_version(cli) != OPENCODE_VERSION and postinstall.is_file():
                # An npm that skips install scripts leaves the placeholder bin/opencode.exe.
                log("running opencode-ai's postinstall by hand")
                subprocess.run(
                    [str(node), postinstall.name],
                    cwd=postinstall.parent, env=env, capture_output=True,
                    timeout=NPM_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL,
                )  # fmt: skip
        finally:
            shutil.rmtree(sandbox, ignore_errors=True)
        require_pinned(cli, installed_version(cli), OPENCODE_VERSION)
    if not (ripgrep_dir(target) / "rg").is_file():
        _install_ripgrep(target, log)
    log(f"opencode {OPENCODE_VERSION} ready")
    return cli

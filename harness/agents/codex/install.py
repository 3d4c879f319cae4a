"""Installing the pinned Codex client (``agents install codex``) from the npm registry.

npm's ``@openai/codex`` (Apache-2.0) is a small node launcher whose platform build comes as
an optional dependency (``@openai/codex-linux-x64``, an alias of the npm version
``0.171.0-linux-x64`` of the same package) holding one static (musl) executable, with its
own ``rg`` and ``bwrap`` beside it. The launcher only execs that executable, so the harness
runs it directly: no node at run time. When npm skipped the optional dependency, the
platform package is installed by its version alias. Every start of the client, ``--version``
included, writes below ``CODEX_HOME``, so npm and our version check run with ``HOME``,
``TMPDIR`` and ``CODEX_HOME`` in a throw-away dir inside the install dir. Idempotent: an
install whose executable answers ``--version`` with the pinned version is reused.
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness.agents.codex.launch import CODEX_VERSION
from harness.agents.npm import cache_dir, npm_install, require_npm, require_pinned, run
from harness.errors import AgentLaunchError

PACKAGE = "@openai/codex"
#: The machine -> (npm platform suffix, the executable's target triple).
PLATFORMS = {
    "x86_64": ("linux-x64", "x86_64-unknown-linux-musl"),
    "aarch64": ("linux-arm64", "aarch64-unknown-linux-musl"),
}
#: Seconds npm may take for one install (a 320 MB platform package on a slow link).
NPM_TIMEOUT_S = 900
VERSION_TIMEOUT_S = 60


def default_dir() -> Path:
    """``$XDG_CACHE_HOME/swarm-harness/codex-<version>`` (``~/.cache`` by default)."""
    return cache_dir(f"codex-{CODEX_VERSION}")


def _platform() -> tuple[str, str]:
    machine = platform.machine().lower()
    if platform.system() != "Linux" or machine not in PLATFORMS:
        raise AgentLaunchError(
            f"agents install codex: no build for {platform.system()} {machine} "
            f"(Linux {' or '.join(PLATFORMS)} only)"
        )
    return PLATFORMS[machine]


def client_path(target: Path) -> Path:
    """The native executable inside an install at ``target``."""
    suffix, triple = _platform()
    vendor = target / "node_modules" / "@openai" / f"codex-{suffix}" / "vendor" / triple
    return vendor / "bin" / "codex"


def _sandboxed(sandbox: Path) -> dict[str, str]:
    """Our environment with every dir the client or npm writes to inside ``sandbox``; the
    user's ``~/.npmrc`` still applies."""
    env = dict(os.environ)
    env.setdefault("npm_config_userconfig", str(Path.home() / ".npmrc"))
    for var in ("HOME", "TMPDIR", "CODEX_HOME"):
        (sandbox / var.lower()).mkdir(parents=True, exist_ok=True)
        env[var] = str(sandbox / var.lower())
    env.setdefault("npm_config_cache", str(sandbox / "npm-cache"))
    env.update(npm_config_update_notifier="false", npm_config_fund="false")
    return env


def installed_version(cli: Path) -> str | None:
    """What ``cli --version`` says (``codex-cli 0.171.0`` -> ``0.171.0``), run with every
    home in a throw-away dir; None if it does not run."""
    if not cli.exists():
        return None
    with tempfile.TemporaryDirectory(prefix="swh-version-") as sandbox:
        try:
            out = run([str(cli), "--version"], VERSION_TIMEOUT_S, _sandboxed(Path(sandbox)))
        except AgentLaunchError:
            return None
    words = out.split()
    return words[-1] if words else None


def install(target: Path | None = None, log: Callable[[str], None] = lambda _: None) -> Path:
    """Install the pinned client into ``target`` (default :func:`default_dir`); the path of
    its native executable. AgentLaunchError (exit 3) when npm is missing or the install
    fails."""
    target = (target or default_dir()).resolve()
    cli = client_path(target)
    if installed_version(cli) == CODEX_VERSION:
        log(f"codex {CODEX_VERSION} already installed in {target}")
        return cli
    require_npm("codex")
    target.mkdir(parents=True, exist_ok=True)
    sandbox = Path(tempfile.mkdtemp(prefix=".sandbox.", dir=target))
    try:
        env = _sandboxed(sandbox)
        log(f"installing {PACKAGE}@{CODEX_VERSION} into {target}")
        npm_install(target, [f"{PACKAGE}@{CODEX_VERSION}"], NPM_TIMEOUT_S, env)
        if not cli.is_file():  # an npm that skips optional dependencies
            suffix, _ = _platform()
            log(f"installing the platform build {PACKAGE}@{CODEX_VERSION}-{suffix}")
            alias = f"{PACKAGE}-{suffix}@npm:{PACKAGE}@{CODEX_VERSION}-{suffix}"
            npm_install(target, ["--no-save", alias], NPM_TIMEOUT_S, env)
    finally:
        shutil.rmtree(sandbox, ignore_errors=True)
    require_pinned(cli, installed_version(cli), CODEX_VERSION)
    log(f"codex {CODEX_VERSION} ready")
    return cli

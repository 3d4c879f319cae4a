"""The sim stays cheap: every run starts five Python processes, so their imports matter.

At concurrency 8 on a 2-core machine, the CPU of a sim run (CLI, one child per shard, the
daemon) decides whether ``slow=S`` items still take S seconds. Modules like ``json`` (via
``re`` and ``enum``), ``typing``, ``dataclasses``, ``subprocess`` or ``threading`` each cost
a process several milliseconds of start-up. ``json``, ``signal`` and ``socket`` (and what they
pull in: ``re``, ``enum``, ``collections``, ``contextlib``, ``selectors``) are allowed: the
project uses no CPython internals (``_json``, ``_signal``, private socket calls) to save them.
"""

from __future__ import annotations

import subprocess
import sys

from simkit import SIM_AGENT, SimLayout

#: Modules no sim process may import on the way through an ordinary run.
HEAVY = frozenset(
    {
        "dataclasses",
        "hashlib",
        "importlib",
        "inspect",
        "random",
        "secrets",
        "subprocess",
        "threading",
        "traceback",
        "typing",
        "uuid",
    }
)


def _imported(stderr: str) -> set[str]:
    """Module names from ``-X importtime`` lines (``import time: self | cumulative | name``)."""
    return {
        line.rpartition("|")[2].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:")
    }


def test_cli_and_children_import_only_light_modules(sim: SimLayout) -> None:
    # PYTHONPROFILEIMPORTTIME reaches every child through the environment; the CLI and the
    # children share stderr, so this sees all of their imports.
    result = sim.run(env=sim.env(PYTHONPROFILEIMPORTTIME="1"))
    assert result.returncode == 0, result.stderr
    imported = _imported(result.stderr)
    assert {"child", "parent", "swarm", "jsonio"} <= imported  # the children did report
    assert imported & HEAVY == set()


def test_daemon_imports_only_light_modules() -> None:
    # Without a socket path the daemon mode stops at its usage message, after its imports.
    proc = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", str(SIM_AGENT), "--sim-daemon"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 1 and "usage:" in proc.stderr
    imported = _imported(proc.stderr)
    assert "daemon" in imported
    assert imported & HEAVY == set()

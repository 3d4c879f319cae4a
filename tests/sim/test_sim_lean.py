"""The sim stays cheap: every run starts five Python processes, so their imports matter.

At concurrency 8 on a 2-core machine, the CPU of a sim run (CLI, one child per shard, the
daemon) decides whether ``slow=S`` items still take S seconds. Modules like
``dataclasses``, ``subprocess`` or ``threading`` each cost a process several milliseconds of
start-up. ``json``, ``signal``, ``socket`` and ``typing`` (and what they pull in: ``re``,
``enum``, ``collections``, ``contextlib``, ``selectors``) are allowed: the project uses no
CPython internals (``_json``, ``_signal``, private socket calls) and no import tricks to
save them (``typing`` adds about 2 ms to a process that already imports ``json``), and the
one process that names the ledger imports ``hashlib`` for it.
"""

from __future__ import annotations

import subprocess
import sys

from simkit import SIM_AGENT, SimLayout

#: Modules no sim process may import on the way through an ordinary run.
HEAVY = frozenset(
    {
        "dataclasses",
        "importlib",
        "inspect",
        "random",
        "secrets",
        "subprocess",
        "threading",
        "traceback",
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
    assert {
        "sim_agent.child",
        "sim_agent.parent",
        "sim_agent.swarm",
        "sim_agent.jsonio",
    } <= imported  # the children did report
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
    assert "sim_agent.daemon" in imported
    assert imported & HEAVY == set()

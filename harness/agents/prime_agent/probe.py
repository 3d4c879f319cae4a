"""Asking a prime-agent CLI's daemon what it speaks, before a resident run starts.

The resident drive needs the daemon's RLM quiescence barrier (schema revision 18 and its
capability) and protocol 7. A daemon without them is refused before the run, in one line,
never silently driven another way (that would change what is measured). The probe starts
the supervisor as the drive does, in a throw-away directory that is its HOME, TMPDIR and
agent home, reads its hello, shuts it down and ends whatever is left.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

import psutil

from harness.agents.prime_agent.daemon import shutdown_daemon
from harness.agents.prime_agent.resident import DriveError, connect, gate

#: The variable that marks every process of a probe, so that all of them are ended.
MARK_VAR = "SWARM_HARNESS_PROBE_MARK"
#: The caller's variables the probe passes on (finding the binary and its runtime).
KEEP = ("PATH", "LANG", "LC_ALL", "TERM")
#: The supervisor greeted 0.7-3.3 s after its spawn on a loaded machine (measured).
HELLO_TIMEOUT_S = 30.0
EXIT_WAIT_S = 5.0


def read_hello(prefix: list[str], timeout_s: float = HELLO_TIMEOUT_S) -> tuple[Any, str | None]:
    """(the daemon's hello, None), or (None, why it could not be read)."""
    scratch = Path(tempfile.mkdtemp(prefix="swh-probe-"))
    token = f"probe-{uuid.uuid4().hex}"
    sock_path = scratch / "daemon.sock"
    for sub in ("home", "tmp", "agent", "repo"):
        (scratch / sub).mkdir()
    env = {k: v for k, v in os.environ.items() if k in KEEP}
    env.update(
        HOME=str(scratch / "home"),
        TMPDIR=str(scratch / "tmp"),
        PRIME_AGENT_CODING_AGENT_DIR=str(scratch / "agent"),
        PI_CODING_AGENT_DIR=str(scratch / "agent"),
        IPYTHONDIR=str(scratch / "home" / ".ipython"),
        PRIME_AGENT_TELEMETRY="0",
        DO_NOT_TRACK="1",
        **{MARK_VAR: token},
    )
    env["PRIME_AGENT_INTERNAL_DAEMON_SUPERVISOR_REGISTRY_DIR"] = str(scratch / "home" / "reg")
    try:
        log = scratch / "daemon.log"
        try:
            with open(log, "wb") as out:
                proc = subprocess.Popen(
                    [*prefix, "--mode", "daemon", "--daemon-socket", str(sock_path)],
                    cwd=scratch / "repo",
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=out,
                    start_new_session=True,
                )
        except OSError as exc:
            return None, f"the daemon could not start: {exc}"
        hello, why = _greeting(str(sock_path), proc, timeout_s)
        shutdown_daemon(sock_path, wait_for_socket_s=0.0)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=EXIT_WAIT_S)
        if hello is None and proc.poll() is not None:
            said = log.read_bytes()[-4000:].decode(errors="replace").strip().splitlines()
            if said:
                why = f"{why}: {said[-1][:200]}"
        return hello, why
    finally:
        _end_marked(token)
        shutil.rmtree(scratch, ignore_errors=True)


def _end_marked(token: str) -> None:
    """End every process carrying the probe's mark (the supervisor starts its workers
    detached, out of its own group): SIGTERM, then SIGKILL after a grace."""
    marked = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.environ().get(MARK_VAR) == token:
                marked.append(proc)
    for proc in marked:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    _, alive = psutil.wait_procs(marked, timeout=2.0)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=2.0)


def _greeting(
    sock_path: str, proc: subprocess.Popen[bytes], timeout_s: float
) -> tuple[Any, str | None]:
    """The hello the drive's own connect reads, or why there is none."""
    try:
        conn, hello = connect(sock_path, proc, threading.Event(), timeout_s)
    except DriveError as exc:
        return None, str(exc)
    conn.close()
    return hello, None


def resident_check(prefix: list[str]) -> tuple[bool, str]:
    """Whether the daemon of ``prefix`` can be driven resident, and why (one line)."""
    hello, why = read_hello(prefix)
    if hello is None:
        return False, f"prime-agent:resident could not ask the daemon what it speaks: {why}"
    missing = gate(hello)
    facts = (
        f"daemon {hello.get('appVersion')}, protocol "
        f"{(hello.get('protocol') or {}).get('version')}, schema revision "
        f"{hello.get('schemaRevision')}"
    )
    if missing:
        return False, (
            f"prime-agent:resident refused ({facts}): " + "; ".join(missing) + "; the "
            "one-shot drive (--agent prime-agent) works with it"
        )
    return True, f"{facts}: the quiescence barrier is there"

"""The supervisor daemon stand-in: newline-delimited JSON over a Unix socket (CONTRACT §2).

The CLI side (:func:`ensure_daemon`) starts one detached if nothing answers on the socket.
The daemon greets every client with a ``daemon_hello``, accepts only the protocol-7
``shutdown`` envelope, keeps a catalog child process like the real supervisor, and never
exits on idle. ``stubborn`` makes it ignore SIGTERM and lie about shutting down.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

try:
    from . import launch
except ImportError:  # run as a script: the sim directory is on sys.path
    import launch  # type: ignore[no-redef,import-not-found]

PROTOCOL = {"name": "prime-agent.daemon", "version": 7}
#: A fresh daemon binds within ~50 ms; 5 s absorbs a loaded CI machine.
START_TIMEOUT_S = 5.0
START_POLL_S = 0.01
#: A live daemon sends its hello at once; a socket that stays silent this long is dead.
PROBE_TIMEOUT_S = 1.0
#: The catalog process is a sleeping python: it dies on SIGTERM well within this.
CATALOG_GRACE_S = 1.0
CAPABILITIES = ("attach_snapshot", "event_sequence", "delete_rlm_subagent", "heartbeat_catalog")


def probe(socket_path: str) -> dict[str, Any] | None:
    """The daemon's hello if one answers on ``socket_path``, else None."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(PROBE_TIMEOUT_S)
            s.connect(socket_path)
            with s.makefile("rb") as f:
                line = f.readline()
        hello = json.loads(line)
    except (OSError, ValueError):
        return None
    return hello if isinstance(hello, dict) and hello.get("type") == "daemon_hello" else None


def ensure_daemon(socket_path: str, cwd: str, stubborn: bool) -> dict[str, Any]:
    """Connect to the daemon on ``socket_path``, starting a detached one if none answers."""
    hello = probe(socket_path)
    if hello is not None:
        return hello
    args = ["--daemon-socket", socket_path, *(["--stubborn"] if stubborn else [])]
    launch.spawn_detached(launch.sim_argv(launch.MODE_DAEMON, *args), cwd, ignore_sigterm=stubborn)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        hello = probe(socket_path)
        if hello is not None:
            return hello
        time.sleep(START_POLL_S)
    raise RuntimeError(f"daemon did not come up on {socket_path} within {START_TIMEOUT_S:g}s")


def run_daemon(argv: list[str]) -> int:
    """Entry of ``agent.py --sim-daemon --daemon-socket PATH [--stubborn]``."""
    if len(argv) < 2 or argv[0] != "--daemon-socket" or set(argv[2:]) - {"--stubborn"}:
        print("usage: --sim-daemon --daemon-socket PATH [--stubborn]", file=sys.stderr)
        return 1
    return Daemon(os.path.abspath(argv[1]), stubborn="--stubborn" in argv[2:]).serve()


def error_response(command_id: Any, message: str, command: str | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"type": "response", "id": command_id}
    if command is not None:
        response["command"] = command
    response.update(success=False, error=message)
    return response


def handle_line(raw: bytes) -> tuple[list[dict[str, Any]], bool]:
    """The replies to one client line, and whether it asked for a shutdown."""
    try:
        msg = json.loads(raw)
    except ValueError as e:
        return [error_response(None, f"invalid JSON: {e}")], False
    if not isinstance(msg, dict) or msg.get("type") != "command":
        command_id = msg.get("id") if isinstance(msg, dict) else None
        return [error_response(command_id, 'expected a {"type":"command"} envelope')], False
    command_id = msg.get("id")
    if msg.get("protocol") != PROTOCOL:
        wanted = json.dumps(PROTOCOL, separators=(",", ":"))
        return [error_response(command_id, f"protocol mismatch: expected {wanted}")], False
    command = msg.get("command")
    if not isinstance(command, dict) or not isinstance(command.get("type"), str):
        return [error_response(command_id, "missing command.type")], False
    if command["type"] != "shutdown":
        name = command["type"]
        return [error_response(command_id, f"unknown command: {name}", name)], False
    ok = {"id": command_id, "type": "response", "command": "shutdown", "success": True}
    return [ok, {"type": "daemon_closing", "reason": "shutdown"}], True


class Daemon:
    def __init__(self, socket_path: str, stubborn: bool) -> None:
        self.socket_path = socket_path
        self.stubborn = stubborn
        self.generation = str(uuid.uuid4())
        self.owner_token = str(uuid.uuid4())
        self.catalog: subprocess.Popen[bytes] | None = None
        self._inode: int | None = None
        self._exit_lock = threading.Lock()

    def serve(self) -> int:
        # Handlers first: a SIGTERM may follow the moment a client has seen us listen.
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        if self.stubborn:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        else:
            signal.signal(signal.SIGTERM, lambda *_: self.exit())
        if probe(self.socket_path) is not None:
            return 0  # another daemon already owns this socket
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)  # stale: nothing answered on it
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.socket_path)
        server.listen(16)
        self._inode = os.stat(self.socket_path).st_ino
        # Same session as the daemon, like the real supervisor's catalog process. SIGTERM
        # waits until we hold its pid, so exit() can never miss it; the catalog itself must
        # not inherit the blocked mask (preexec_fn is safe: no threads run yet).
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        self.catalog = subprocess.Popen(
            launch.sim_argv(launch.MODE_SLEEP),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_unblock_sigterm,
        )
        _unblock_sigterm()
        while True:
            conn, _ = server.accept()
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def hello(self) -> dict[str, Any]:
        return {
            "type": "daemon_hello",
            "socketPath": self.socket_path,
            "protocol": PROTOCOL,
            "schemaId": "protocol-7-sim",
            "schemaRevision": 22,
            "appVersion": "sim",
            "runtime": {
                "buildId": "sim",
                "executablePath": sys.executable,
                "entrypointPath": launch.AGENT_SCRIPT,
            },
            "supervisorGeneration": self.generation,
            "supervisorOwnerToken": self.owner_token,
            "supervisorPid": os.getpid(),
            "supervisorProcessStartId": f"proc:{os.getpid()}",
            "supervisorSocketPath": self.socket_path,
            "clientId": secrets.token_hex(6),
            "serverCapabilities": list(CAPABILITIES),
        }

    def _client(self, conn: socket.socket) -> None:
        shutdown = False
        with contextlib.suppress(OSError), conn, conn.makefile("rb") as lines:
            _send(conn, self.hello())
            for raw in lines:
                if not raw.strip():
                    continue
                replies, shutdown = handle_line(raw)
                for reply in replies:
                    _send(conn, reply)
                if shutdown:
                    break  # hang up as a closing daemon does, even when stubborn lies
        if shutdown and not self.stubborn:
            self.exit()

    def exit(self) -> None:
        """Stop the catalog child, remove our socket file and leave, at most once."""
        if not self._exit_lock.acquire(blocking=False):
            return
        if self.catalog is not None and self.catalog.poll() is None:
            self.catalog.terminate()
            try:
                self.catalog.wait(CATALOG_GRACE_S)
            except subprocess.TimeoutExpired:
                self.catalog.kill()
                self.catalog.wait()
        with contextlib.suppress(OSError):
            if os.stat(self.socket_path).st_ino == self._inode:
                os.unlink(self.socket_path)
        os._exit(0)


def _unblock_sigterm() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _send(conn: socket.socket, obj: dict[str, Any]) -> None:
    conn.sendall((json.dumps(obj, separators=(",", ":")) + "\n").encode())

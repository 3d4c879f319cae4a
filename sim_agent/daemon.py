"""The supervisor daemon stand-in: newline-delimited JSON over a Unix socket (CONTRACT §2).

The CLI side (:func:`ensure_daemon`) starts one detached if nothing answers on the socket.
The daemon greets every client with a ``daemon_hello``, accepts only the protocol-7
``shutdown`` envelope, keeps a catalog child process like the real supervisor, and never
exits on idle. ``stubborn`` makes it ignore SIGTERM and lie about shutting down.

Built on the C modules under :mod:`socket`, :mod:`threading` and :mod:`signal`
(``_socket``, ``_thread``, ``_signal``): the wrappers import ``enum``, ``selectors`` and
more, which would cost the daemon and every CLI run more start-up CPU than they do work.
"""

from __future__ import annotations

import _thread  # the documented low-level threading API: one OS thread per client
import os
import signal
import socket
import sys
import time
from typing import TYPE_CHECKING

from sim_agent import jsonio, launch

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

PROTOCOL = {"name": "prime-agent.daemon", "version": 7}
#: A fresh daemon binds within ~50 ms; 5 s absorbs a loaded CI machine.
START_TIMEOUT_S = 5.0
START_POLL_S = 0.01
#: A live daemon sends its hello at once; a socket that stays silent this long is dead.
PROBE_TIMEOUT_S = 1.0
#: The catalog process is a ``sleep``: it dies on SIGTERM well within this.
CATALOG_GRACE_S = 1.0
#: Without pidfds, how often exit() looks whether the catalog has gone yet.
CATALOG_POLL_S = 0.01
CAPABILITIES = ("attach_snapshot", "event_sequence", "delete_rlm_subagent", "heartbeat_catalog")
RECV_BYTES = 65536


def probe(socket_path: str) -> dict[str, Any] | None:
    """The daemon's hello if one answers on ``socket_path``, else None."""
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(PROBE_TIMEOUT_S)
            s.connect(socket_path)
            line = next(_lines(s), b"")
        finally:
            s.close()
        hello = jsonio.loads(line)
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
        time.sleep(START_POLL_S)  # a python takes longer than this to start anyway
        hello = probe(socket_path)
        if hello is not None:
            return hello
    raise RuntimeError(f"daemon did not come up on {socket_path} within {START_TIMEOUT_S:g}s")


def run_daemon(argv: list[str]) -> int:
    """Entry of ``agent.py --sim-daemon --daemon-socket PATH [--stubborn]``."""
    if len(argv) < 2 or argv[0] != "--daemon-socket" or set(argv[2:]) - {"--stubborn"}:
        print("usage: --sim-daemon --daemon-socket PATH [--stubborn]", file=sys.stderr)
        return 1
    return Daemon(os.path.abspath(argv[1]), stubborn="--stubborn" in argv[2:]).serve()


def hello_frame(
    socket_path: str,
    generation: str,
    owner_token: str,
    client_id: str,
    schema_id: str,
    revision: int,
    capabilities: Iterable[str],
) -> dict[str, Any]:
    """The ``daemon_hello`` a supervisor greets each client with (the real one's keys)."""
    return {
        "type": "daemon_hello",
        "socketPath": socket_path,
        "protocol": PROTOCOL,
        "schemaId": schema_id,
        "schemaRevision": revision,
        "appVersion": "sim",
        "runtime": {
            "buildId": "sim",
            "executablePath": sys.executable,
            "entrypointPath": launch.AGENT_SCRIPT,
        },
        "supervisorGeneration": generation,
        "supervisorOwnerToken": owner_token,
        "supervisorPid": os.getpid(),
        "supervisorProcessStartId": f"proc:{os.getpid()}",
        "supervisorSocketPath": socket_path,
        "clientId": client_id,
        "serverCapabilities": list(capabilities),
    }


def error_response(command_id: Any, message: str, command: str | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"type": "response", "id": command_id}
    if command is not None:
        response["command"] = command
    response.update(success=False, error=message)
    return response


def handle_line(raw: bytes) -> tuple[list[dict[str, Any]], bool]:
    """The replies to one client line, and whether it asked for a shutdown."""
    try:
        msg = jsonio.loads(raw)
    except ValueError as e:
        return [error_response(None, f"invalid JSON: {e}")], False
    if not isinstance(msg, dict) or msg.get("type") != "command":
        command_id = msg.get("id") if isinstance(msg, dict) else None
        return [error_response(command_id, 'expected a {"type":"command"} envelope')], False
    command_id = msg.get("id")
    if msg.get("protocol") != PROTOCOL:
        wanted = jsonio.dumps(PROTOCOL, ensure_ascii=True)
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
        self.generation = _uuid4()
        self.owner_token = _uuid4()
        self.catalog: int | None = None  # its pid, until reaped
        self._inode: int | None = None
        self._exit_lock = _thread.allocate_lock()

    def serve(self) -> int:
        # Handlers first: a SIGTERM may follow the moment a client has seen us listen.
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        if self.stubborn:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        else:
            signal.signal(signal.SIGTERM, lambda *_: self.exit())
        if probe(self.socket_path) is not None:
            return 0  # another daemon already owns this socket
        try:  # noqa: SIM105 (contextlib is an import a sim process can skip)
            os.unlink(self.socket_path)  # stale: nothing answered on it
        except FileNotFoundError:
            pass
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.socket_path)
        server.listen(16)
        self._inode = os.stat(self.socket_path).st_ino
        # Same session as the daemon, like the real supervisor's catalog process. SIGTERM
        # waits until we hold its pid, so exit() can never miss it; the catalog itself
        # starts with nothing blocked and SIGTERM at its default (launch.spawn_catalog).
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            self.catalog = launch.spawn_catalog()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        while True:
            conn, _ = server.accept()
            _thread.start_new_thread(self._client, (conn,))

    def hello(self) -> dict[str, Any]:
        return hello_frame(
            self.socket_path,
            self.generation,
            self.owner_token,
            os.urandom(6).hex(),  # what secrets.token_hex(6) returns
            "protocol-7-sim",
            22,
            CAPABILITIES,
        )

    def _client(self, conn: socket.socket) -> None:
        shutdown = False
        try:
            _send(conn, self.hello())
            for raw in _lines(conn):
                if not raw.strip():
                    continue
                replies, shutdown = handle_line(raw)
                for reply in replies:
                    _send(conn, reply)
                if shutdown:
                    break  # hang up as a closing daemon does, even when stubborn lies
        except OSError:
            pass
        finally:
            conn.close()
        if shutdown and not self.stubborn:
            self.exit()

    def exit(self) -> None:
        """Stop the catalog child, remove our socket file and leave, at most once."""
        if not self._exit_lock.acquire(False):
            return
        if self.catalog is not None:
            _stop_child(self.catalog, CATALOG_GRACE_S)
        try:
            if os.stat(self.socket_path).st_ino == self._inode:
                os.unlink(self.socket_path)
        except OSError:
            pass
        os._exit(0)


def _stop_child(pid: int, grace_s: float) -> None:
    """SIGTERM our child ``pid``, SIGKILL it if still there after ``grace_s``; reap it."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return  # it had already exited (and its pid cannot have been reused)
        os.kill(pid, signal.SIGTERM)
        if not _exits_within(pid, grace_s):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _exits_within(pid: int, timeout_s: float) -> bool:
    """Whether our child ``pid`` exits within ``timeout_s``; reaps it if so.

    Blocks on a pidfd (Linux 5.3+) until the child exits or the time is up; elsewhere
    looks every CATALOG_POLL_S.
    """
    try:
        import select

        pidfd = os.pidfd_open(pid)
    except (ImportError, AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            poller.poll(int(timeout_s * 1000))  # readable once the child has exited
        finally:
            os.close(pidfd)
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        time.sleep(CATALOG_POLL_S)
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    return False


def _lines(conn: socket.socket) -> Iterator[bytes]:
    """The newline-terminated lines from ``conn``, then whatever it sent before EOF."""
    buf = b""
    while True:
        chunk = conn.recv(RECV_BYTES)
        if not chunk:
            if buf:
                yield buf
            return
        buf += chunk
        while (end := buf.find(b"\n")) >= 0:
            line, buf = buf[: end + 1], buf[end + 1 :]
            yield line


def _send(conn: socket.socket, obj: dict[str, Any]) -> None:
    conn.sendall((jsonio.dumps(obj, ensure_ascii=True) + "\n").encode())


def _uuid4() -> str:
    """``str(uuid.uuid4())`` without importing uuid."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40  # version 4
    b[8] = (b[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

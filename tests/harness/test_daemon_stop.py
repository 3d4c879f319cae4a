"""Stopping prime-agent's daemon: the socket is waited for only while something could bind it."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

from harness.agents.prime_agent.daemon import shutdown_daemon


def _serve_once(sock_path: Path, bind_after_s: float) -> threading.Thread:
    """A daemon stand-in on a real Unix socket: hello, then acknowledge one shutdown."""

    def serve() -> None:
        time.sleep(bind_after_s)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
            staging = sock_path.with_name("staging.sock")
            server.bind(str(staging))
            server.listen(1)
            staging.rename(sock_path)  # the socket appears already listening
            conn, _ = server.accept()
            with conn:
                conn.sendall(b'{"type":"daemon_hello"}\n')
                request = json.loads(conn.makefile("rb").readline())
                reply = {"type": "response", "id": request["id"], "success": True}
                conn.sendall(json.dumps(reply).encode() + b"\n")
                conn.sendall(b'{"type":"daemon_closing"}\n')

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_nothing_running_means_no_wait_for_a_socket(tmp_path: Path) -> None:
    looks: list[int] = []

    def running() -> bool:
        looks.append(1)
        return False

    outcome = shutdown_daemon(tmp_path / "daemon.sock", wait_for_socket_s=60.0, running=running)
    assert outcome.status == "no-socket"
    assert len(looks) == 1  # gave up at the first look, not after the 60 s wait


def test_a_daemon_still_starting_is_waited_for(tmp_path: Path) -> None:
    sock_path = tmp_path / "daemon.sock"
    server = _serve_once(sock_path, bind_after_s=0.3)
    looks: list[int] = []

    def running() -> bool:
        looks.append(1)
        return True

    outcome = shutdown_daemon(sock_path, wait_for_socket_s=30.0, running=running)
    server.join(timeout=10)
    assert outcome.status == "acknowledged"
    assert looks  # the socket was not there at first: liveness was asked while waiting


def test_a_bound_socket_is_used_whatever_the_process_scan_says(tmp_path: Path) -> None:
    # A daemon the scan cannot attribute to the item is still told to shut down.
    sock_path = tmp_path / "daemon.sock"
    server = _serve_once(sock_path, bind_after_s=0.0)
    deadline = time.monotonic() + 10
    while not sock_path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    outcome = shutdown_daemon(sock_path, wait_for_socket_s=0.0, running=lambda: False)
    server.join(timeout=10)
    assert outcome.status == "acknowledged"

"""Telling the agent's detached daemon to shut down (CONTRACT §2)."""

from __future__ import annotations

import contextlib
import json
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PROTOCOL = {"name": "prime-agent.daemon", "version": 7}

#: A launch that timed out early may not have bound its socket yet; the daemon takes a
#: couple of seconds to start, so wait this long for the socket to appear.
SOCKET_APPEAR_WAIT_S = 5.0

#: After a normal exit the daemon is already listening; a short look suffices.
SOCKET_PRESENT_WAIT_S = 0.5

#: Per-read timeout on the socket: the real daemon answers in milliseconds.
IO_TIMEOUT_S = 3.0

ShutdownStatus = Literal["acknowledged", "refused", "no-socket", "no-answer", "error"]


@dataclass(frozen=True)
class ShutdownOutcome:
    status: ShutdownStatus
    detail: str = ""


def shutdown_daemon(
    sock_path: Path,
    *,
    wait_for_socket_s: float,
    force: bool = False,
    running: Callable[[], bool] = lambda: True,
) -> ShutdownOutcome:
    """Send the shutdown envelope and wait for the daemon to close the connection.

    The socket is waited for only while ``running()`` says a process that could still bind
    it is alive: an agent that left nothing behind has no daemon to wait for.
    """
    deadline = time.monotonic() + wait_for_socket_s
    while not sock_path.exists():
        if time.monotonic() >= deadline or not running():
            return ShutdownOutcome("no-socket")
        time.sleep(0.1)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(IO_TIMEOUT_S)
            conn.connect(str(sock_path))
            reader = conn.makefile("rb")
            reader.readline()  # daemon_hello (content not needed)
            command: dict[str, object] = {"type": "shutdown"}
            if force:
                command["force"] = True
            envelope = {
                "type": "command",
                "id": str(uuid.uuid4()),
                "protocol": PROTOCOL,
                "clientId": "swarm-harness",
                "command": command,
            }
            conn.sendall(json.dumps(envelope).encode() + b"\n")
            return _await_response(reader, envelope["id"])
    except (OSError, ValueError) as exc:
        return ShutdownOutcome("error", str(exc))


def _await_response(reader, request_id: object) -> ShutdownOutcome:  # type: ignore[no-untyped-def]
    outcome = ShutdownOutcome("no-answer")
    with contextlib.suppress(OSError, ValueError):
        for _ in range(64):  # bounded: the daemon may interleave events before replying
            line = reader.readline(1 << 20)
            if not line:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if (
                isinstance(msg, dict)
                and msg.get("type") == "response"
                and msg.get("id") == request_id
            ):
                ok = msg.get("success") is True
                outcome = ShutdownOutcome(
                    "acknowledged" if ok else "refused", str(msg.get("error", ""))
                )
            if isinstance(msg, dict) and msg.get("type") == "daemon_closing":
                break
    return outcome

"""A small stdlib client of the daemon protocol, to drive the sim's resident supervisor.

It does what a resident drive does (``real-runs/resident-daemon``): start the supervisor
(``agent.py --mode daemon --daemon-socket SOCK``) detached, read the hello, ``create`` a
client-owned session, ``attach``, ``get_session_header``, ``prompt_and_wait``, the headless
wait, ``get_rlm_children``, ``complete_owned_session``, ``shutdown``, read to EOF, close.
Every frame is kept, in order, as the captures keep them.
"""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from simkit import PROTOCOL, RUN_TIMEOUT_S, SIM_AGENT, SimLayout

#: The supervisor binds at once; a loaded CI box may take seconds to start a python.
START_TIMEOUT_S = 15.0
#: The attach capabilities of the product's own resident client.
ATTACH_CAPABILITIES = ["attach_snapshot", "event_sequence", "slim_attach", "client_owned_sessions"]


@dataclass
class Frame:
    dir: str  # "out" | "in"
    frame: dict[str, Any]


@dataclass
class Drive:
    """What one drive saw: every frame, and the responses by command."""

    hello: dict[str, Any]
    frames: list[Frame] = field(default_factory=list)
    responses: dict[str, dict[str, Any]] = field(default_factory=dict)
    returncode: int | None = None

    def incoming(self, kind: str) -> list[dict[str, Any]]:
        return [f.frame for f in self.frames if f.dir == "in" and f.frame.get("type") == kind]

    def events(self) -> list[dict[str, Any]]:
        return [f["event"] for f in self.incoming("session_event")]

    def stdout(self) -> list[dict[str, Any]]:
        """The ``--mode json`` stream rebuilt: the header, then every event."""
        return [self.responses["get_session_header"]["data"]["header"], *self.events()]

    def after(self, command: str) -> list[dict[str, Any]]:
        """The frames that came in after the response to ``command``."""
        frames = [f.frame for f in self.frames if f.dir == "in"]
        at = next(i for i, f in enumerate(frames) if f.get("command") == command)
        return frames[at + 1 :]


class ResidentClient:
    """One supervisor process and one connection to it."""

    def __init__(self, layout: SimLayout, env: dict[str, str] | None = None) -> None:
        self.layout = layout
        self.stderr_path = layout.root / "supervisor.stderr"
        argv = [sys.executable, "-S", str(SIM_AGENT), "--mode", "daemon"]
        with self.stderr_path.open("wb") as stderr:
            self.proc = subprocess.Popen(
                [*argv, "--daemon-socket", str(layout.socket)],
                cwd=layout.repo,
                env=layout.env() if env is None else env,
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
                start_new_session=True,
            )
        self.sock = self._connect()
        self.client_id = f"sim-test:{uuid.uuid4()}"
        self._count = 0
        self._inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        hello = self._read_line(self.sock.makefile("rb"))
        assert hello is not None and hello["type"] == "daemon_hello", hello
        self.drive = Drive(hello=hello, frames=[Frame("in", hello)])
        self._reader.start()

    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(str(self.layout.socket))
                return sock
            except OSError:
                sock.close()
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise AssertionError(f"no supervisor: {self.stderr_path.read_text()}") from None
                time.sleep(0.02)

    @staticmethod
    def _read_line(lines: Any) -> dict[str, Any] | None:
        line = lines.readline()
        return json.loads(line) if line else None

    def _read(self) -> None:
        lines = self.sock.makefile("rb")
        while True:
            try:
                frame = self._read_line(lines)
            except OSError:
                frame = None
            self._inbox.put(frame)
            if frame is None:
                return

    def send(self, kind: str, **fields: Any) -> str:
        self._count += 1
        command_id = f"t_{self._count}"
        envelope = {
            "type": "command",
            "id": command_id,
            "protocol": PROTOCOL,
            "clientId": self.client_id,
            "command": {"type": kind, **fields, "id": command_id},
        }
        self.drive.frames.append(Frame("out", envelope))
        self.sock.sendall(json.dumps(envelope).encode() + b"\n")
        return command_id

    def next_frame(self, timeout: float = RUN_TIMEOUT_S) -> dict[str, Any] | None:
        """The next incoming frame, None at EOF."""
        frame = self._inbox.get(timeout=timeout)
        if frame is not None:
            self.drive.frames.append(Frame("in", frame))
        return frame

    def call(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a command, read until its response; acknowledge it if it mutates."""
        command_id = self.send(kind, **fields)
        while True:
            frame = self.next_frame()
            assert frame is not None, f"EOF before the response to {kind}"
            if frame.get("type") == "response" and frame.get("id") == command_id:
                self.drive.responses[kind] = frame
                read_only = kind in ("attach", "get_session_header", "get_rlm_children")
                if frame["success"] and not read_only:
                    self.send("ack_result", commandId=command_id)
                return frame

    def read_to_eof(self) -> list[dict[str, Any]]:
        out = []
        while (frame := self.next_frame()) is not None:
            out.append(frame)
        return out

    def close(self) -> int:
        """Close our end; the supervisor's exit code."""
        self.sock.close()
        self.drive.returncode = self.proc.wait(timeout=RUN_TIMEOUT_S)
        return self.drive.returncode

    # --- the drive's steps --------------------------------------------------------------

    def create(self) -> str:
        layout = self.layout
        session = {
            "cwd": str(layout.repo),
            "agentDir": str(layout.home),
            "sessionDir": str(layout.sessions),
            "model": "sim/oracle",
            "executionMode": "json",
            "serializedRefine": True,
            "telemetryDisabled": True,
        }
        launch_env = {
            k: v for k, v in layout.env().items() if not k.startswith("PRIME_AGENT_INTERNAL_")
        }
        created = self.call(
            "create", config=session, lifecycle="client_owned", launchEnv=launch_env
        )
        assert created["success"], created
        active = str(created["data"]["id"])
        attached = self.call(
            "attach",
            activeSessionId=active,
            clientId=self.client_id,
            capabilities=ATTACH_CAPABILITIES,
            supportsExtensionUi=False,
            telemetryDisabled=True,
        )
        assert attached["success"], attached
        assert self.call("get_session_header", activeSessionId=active)["success"]
        return active

    def finish(self, active: str) -> None:
        """The rest of a drive after the waits: children, completion, shutdown, EOF, close."""
        assert self.call("get_rlm_children", activeSessionId=active)["success"]
        assert self.call("complete_owned_session", activeSessionId=active)["success"]
        assert self.call("shutdown")["success"]
        self.read_to_eof()
        self.close()


def drive(layout: SimLayout, behaviours: str, barrier: bool = True) -> Drive:
    """One whole resident drive of ``behaviours``; the supervisor has exited after it."""
    layout.write_oracle(behaviours)
    client = ResidentClient(layout)
    try:
        active = client.create()
        assert client.call("prompt_and_wait", activeSessionId=active, message="Answer.")["success"]
        fields = {"waitForRlmQuiescence": True} if barrier else {}
        waited = client.call("wait_for_headless_completion", activeSessionId=active, **fields)
        assert waited["success"], waited
        client.finish(active)
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()
    return client.drive

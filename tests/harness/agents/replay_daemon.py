"""A prime-agent supervisor that replays a captured resident drive, frame by frame.

``python replay_daemon.py --mode daemon --daemon-socket SOCK`` (the real CLI's argv), with
``REPLAY_FRAMES`` naming a captured ``frames.jsonl`` (tests/data/real-runs/resident-daemon)
and ``REPLAY_REPORT`` where to write what it found. It binds SOCK, accepts one client and
walks the capture: every frame the real daemon sent is sent (responses under the ids this
client chose), and every frame the capture's client sent is read from this client and
compared with it (command type, fields, the paths under the item's root, the acknowledged
ids). ``REPLAY_ROOT`` is the item root that stands for the capture's ``/srv/evals/item``.
With ``REPLAY_STOP_BEFORE_SHUTDOWN`` set, it sends SIGTERM to its parent (the driver) when
the capture's client sends ``shutdown`` next: that capture's shutdown came at a deadline.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

CAPTURE_ROOT = "/srv/evals/item"


def _paths(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(CAPTURE_ROOT, root)
    if isinstance(value, dict):
        return {k: _paths(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_paths(v, root) for v in value]
    return value


class Replay:
    def __init__(self, frames: list[dict[str, Any]], root: str, stop_before_shutdown: bool) -> None:
        self.frames = frames
        self.root = root
        self.stop_before_shutdown = stop_before_shutdown
        self.ids: dict[str, str] = {}  # captured command id -> this client's
        self.client_ids: set[str] = set()
        self.mismatches: list[str] = []
        self.compared = 0

    def expect(self, want: dict[str, Any], got: dict[str, Any], where: int) -> None:
        """Compare one client frame with the captured one."""
        self.compared += 1
        wc, gc = want.get("command") or {}, got.get("command") or {}
        label = f"frame {where} ({wc.get('type')})"
        if got.get("type") != "command" or got.get("protocol") != want.get("protocol"):
            self.mismatches.append(f"{label}: envelope {got.get('type')} {got.get('protocol')}")
        if got.get("id") != gc.get("id"):
            self.mismatches.append(f"{label}: inner id {gc.get('id')} != outer {got.get('id')}")
        self.client_ids.add(str(got.get("clientId")))
        self.ids[str(want.get("id"))] = str(got.get("id"))
        if set(gc) != set(wc):
            self.mismatches.append(f"{label}: fields {sorted(gc)} != {sorted(wc)}")
        for key, value in wc.items():
            if key in ("id", "launchEnv"):
                continue
            if key == "clientId":
                if gc.get(key) != got.get("clientId"):
                    self.mismatches.append(f"{label}: attach clientId is not the envelope's")
                continue
            if key == "commandId":
                value = self.ids.get(str(value), f"<unmapped {value}>")
            elif key == "activeSessionId":
                pass  # replayed from the capture: the same value
            else:
                value = _paths(value, self.root)
            if gc.get(key) != value:
                self.mismatches.append(f"{label}: {key} = {gc.get(key)!r}, want {value!r}")
        if "launchEnv" in wc:
            env = gc.get("launchEnv")
            if not isinstance(env, dict) or env.get("HOME") != f"{self.root}/home":
                self.mismatches.append(f"{label}: launchEnv without the item's HOME")
            elif any(k.startswith("PRIME_AGENT_INTERNAL_") for k in env):
                self.mismatches.append(f"{label}: launchEnv carries PRIME_AGENT_INTERNAL_*")

    def serve(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        for where, rec in enumerate(self.frames):
            frame = rec["frame"]
            if rec["dir"] == "in":
                if frame.get("type") == "response":
                    frame = {**frame, "id": self.ids.get(frame["id"], frame["id"])}
                conn.sendall(json.dumps(frame, ensure_ascii=False).encode() + b"\n")
                continue
            if self.stop_before_shutdown and (frame.get("command") or {}).get("type") == "shutdown":
                os.kill(os.getppid(), signal.SIGTERM)
            line = reader.readline()
            if not line:
                self.mismatches.append(f"frame {where}: the client hung up; wanted {frame}")
                return
            self.expect(frame, json.loads(line), where)
        conn.shutdown(socket.SHUT_WR)  # EOF, as the supervisor ends each client's socket
        extra = reader.readline()
        if extra:
            self.mismatches.append(f"after the capture the client sent {extra[:200]!r}")


def main() -> int:
    args = sys.argv[1:]
    if args[:2] != ["--mode", "daemon"] or args[2] != "--daemon-socket":
        print(f"usage: --mode daemon --daemon-socket SOCK, got {args}", file=sys.stderr)
        return 2
    frames = [json.loads(x) for x in Path(os.environ["REPLAY_FRAMES"]).read_text().splitlines()]
    replay = Replay(
        frames, os.environ["REPLAY_ROOT"], bool(os.environ.get("REPLAY_STOP_BEFORE_SHUTDOWN"))
    )
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(args[3])
    server.listen(1)
    conn, _ = server.accept()
    try:
        replay.serve(conn)
    finally:
        conn.close()
        server.close()
        os.unlink(args[3])
        report = {
            "compared": replay.compared,
            "mismatches": replay.mismatches,
            "client_ids": sorted(replay.client_ids),
        }
        Path(os.environ["REPLAY_REPORT"]).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

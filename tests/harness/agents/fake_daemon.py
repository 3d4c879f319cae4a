"""A prime-agent stand-in whose daemon greets with what ``FAKE_DAEMON_HELLO`` says.

``fake_daemon.py --version`` prints a version; ``fake_daemon.py --mode daemon
--daemon-socket SOCK`` binds SOCK, greets every client with the real 0.8.0 hello changed by
the JSON object in ``FAKE_DAEMON_HELLO`` (a key set to null is removed), answers
``shutdown`` and exits. Everything else it answers with a failure. The capability gate's
tests run it as the agent binary.
"""

from __future__ import annotations

import json
import os
import socket
import sys

HELLO = {
    "type": "daemon_hello",
    "protocol": {"name": "prime-agent.daemon", "version": 7},
    "schemaId": "protocol-7-schema-22-4d515169dc6b",
    "schemaRevision": 22,
    "appVersion": "0.8.0-fake",
    "clientId": "0123456789ab",
    "serverCapabilities": [
        "attach_snapshot", "event_sequence", "slim_attach", "client_owned_sessions",
        "session_input_admission", "authoritative_child_roster", "rlm_quiescence_barrier",
    ],
}  # fmt: skip


def main() -> int:
    args = sys.argv[1:]
    if args == ["--version"]:
        print("0.8.0-fake")
        return 0
    if args[:3] != ["--mode", "daemon", "--daemon-socket"] or len(args) != 4:
        print(f"fake_daemon: unsupported {args}", file=sys.stderr)
        return 1
    hello = dict(HELLO)
    for key, value in json.loads(os.environ.get("FAKE_DAEMON_HELLO") or "{}").items():
        if value is None:
            hello.pop(key, None)
        else:
            hello[key] = value
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(args[3])
    server.listen(4)
    try:
        while True:
            conn, _ = server.accept()
            with conn:
                conn.sendall(json.dumps(hello).encode() + b"\n")
                for line in conn.makefile("rb"):
                    frame = json.loads(line)
                    command = frame.get("command") or {}
                    if command.get("type") == "ack_result":
                        continue
                    ok = command.get("type") == "shutdown"
                    response = {"id": frame.get("id"), "type": "response",
                                "command": command.get("type"), "success": ok}  # fmt: skip
                    if not ok:
                        response["error"] = "not supported by the fake daemon"
                    conn.sendall(json.dumps(response).encode() + b"\n")
                    if ok:
                        conn.sendall(b'{"type":"daemon_closing","reason":"shutdown"}\n')
                        return 0
    finally:
        server.close()
        os.unlink(args[3])


if __name__ == "__main__":
    sys.exit(main())

"""The resident drive of prime-agent: a client of its daemon protocol, run as the item's agent.

``python -I -S resident.py AGENT_PREFIX... -- STATE_JSON``

The one-shot ``--mode json`` CLI owns its session and completes it when its process exits,
so a parent that ends its turn before its children reply loses them. This driver stands in
for that CLI process (the harness runs it like one: its timeout, SIGTERM then SIGKILL, the
sweep): it starts the supervisor (``AGENT_PREFIX --mode daemon --daemon-socket SOCK``,
detached, as the CLI does), creates a client-owned session, prompts it, waits on the RLM
quiescence barrier (every child settled and its reply consumed), lists the children,
completes the session and shuts the supervisor down. It writes on stdout what the CLI would
have (the session header, then every session event) and the drive's own record to the
state's ``record`` path. Facts: docs/reference/agents/prime-agent.md (the resident drive),
measured against the real CLI 0.8.0 and replayed from its captured frames in the tests.

Standard library only, and no import of the harness: it runs in its own interpreter, cheap
to start. Exit codes (what stands for the CLI's):

- 0: the drive completed (the session settled, was completed, the supervisor shut down);
- 1: a command failed, or the daemon hung up or broke the protocol (stderr says which);
- 2: bad usage (no state file);
- 3: the daemon lacks what the drive needs (refused before anything was prompted);
- 4: the supervisor never came up (it exited, or no hello in time);
- 143: stopped by SIGTERM (the item's deadline or a cancel): ``shutdown`` was sent first.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

PROTOCOL = {"name": "prime-agent.daemon", "version": 7}
#: The capabilities this client announces on ``attach`` (no extension UI: it has none).
CLIENT_CAPABILITIES = ("attach_snapshot", "event_sequence", "slim_attach", "client_owned_sessions")
#: The daemon's read-only commands (daemon-protocol.ts); every other command is journaled
#: until its result is acknowledged with ``ack_result``, the barrier wait included.
READ_ONLY = frozenset(
    {
        "ack_result", "list", "list_saved_sessions", "attach", "reattach",
        "agent_messages_status", "wait_for_idle", "get_session_header", "get_state",
        "get_connection_state", "get_messages", "get_rlm_children", "get_session_stats",
        "get_context_tree", "get_commands", "get_resource_snapshot", "get_model_catalog",
        "get_available_models", "get_queue", "cron_list", "heartbeats_list", "heartbeat_get",
        "get_session_context", "get_session_tree", "get_user_messages_for_forking",
        "get_last_assistant_text", "get_system_prompt", "get_rlm_max_depth_status",
        "get_tool_definition",
    }
)  # fmt: skip

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_REFUSED, EXIT_NO_DAEMON = 0, 1, 2, 3, 4
EXIT_STOPPED = 128 + signal.SIGTERM

#: The supervisor bound its socket and greeted 0.7-3.3 s after its spawn on a loaded
#: machine (measured); a minute absorbs a far worse one without hiding a dead launch.
START_TIMEOUT_S = 60.0
#: Commands that do not run the agent answer in milliseconds (``create`` spawns the worker:
#: up to 1.8 s measured).
COMMAND_TIMEOUT_S = 60.0
#: After SIGTERM the harness escalates to SIGKILL in 2 s: the shutdown and the drain of the
#: session's last events must fit well inside that.
STOP_DRAIN_S = 1.5
#: How long the supervisor may take to exit after ``shutdown`` (0.06-2.0 s measured).
EXIT_WAIT_S = 10.0
POLL_S = 0.1


@dataclass(frozen=True)
class Requirement:
    """What one step of the drive needs of the daemon (its own compatibility table)."""

    needed_by: str
    capability: str
    min_revision: int = 0


#: The product's own client checks these before it sends the command (daemon-protocol.ts).
REQUIREMENTS = (
    Requirement(
        "wait_for_headless_completion with the quiescence barrier", "rlm_quiescence_barrier", 18
    ),
    Requirement("prompt_and_wait", "session_input_admission"),
    Requirement("a client-owned session", "client_owned_sessions"),
    Requirement("get_rlm_children", "authoritative_child_roster", 17),
)


def gate(hello: Mapping[str, Any]) -> list[str]:
    """What the daemon that sent ``hello`` lacks for this drive (empty: it has it all)."""
    protocol = _mapping(hello.get("protocol"))
    if protocol != PROTOCOL:
        return [
            f"protocol {protocol.get('name')} v{protocol.get('version')} "
            f"(this drive speaks {PROTOCOL['name']} v{PROTOCOL['version']})"
        ]
    revision = hello.get("schemaRevision")
    revision = revision if isinstance(revision, int) else -1
    offered = hello.get("serverCapabilities")
    offered = set(offered) if isinstance(offered, list) else set()
    missing = []
    for req in REQUIREMENTS:
        lacks = []
        if revision < req.min_revision:
            lacks.append(f"schema revision >= {req.min_revision} (it has {revision})")
        if req.capability not in offered:
            lacks.append(f"the {req.capability} capability")
        if lacks:
            missing.append(f"{req.needed_by} needs {' and '.join(lacks)}")
    return missing


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def hello_facts(hello: Mapping[str, Any]) -> dict[str, Any]:
    """What the item records of the daemon it drove."""
    caps = hello.get("serverCapabilities")
    return {
        "protocol": hello.get("protocol"),
        "schema_id": hello.get("schemaId"),
        "schema_revision": hello.get("schemaRevision"),
        "app_version": hello.get("appVersion"),
        "capabilities": sorted(c for c in caps if isinstance(c, str))
        if isinstance(caps, list)
        else [],
    }


class Stopped(Exception):
    """SIGTERM arrived: the item's deadline or a cancel."""


class DriveError(Exception):
    """The daemon failed a command, hung up, or broke the protocol."""


def dumps(obj: Any) -> str:
    """Compact JSON with raw UTF-8: the bytes Node's ``JSON.stringify`` writes."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Connection:
    """One client connection: a reader thread drains the socket into a queue at once (a
    client that reads slowly is marked backpressured and loses events), the caller takes
    whole frames from it."""

    sock: socket.socket
    frames: queue.Queue[dict[str, Any] | None] = field(default_factory=queue.Queue)
    malformed: int = 0

    def start(self) -> None:
        threading.Thread(target=self._read, name="daemon-reader", daemon=True).start()

    def _read(self) -> None:
        try:
            with self.sock.makefile("rb") as reader:
                for line in reader:
                    try:
                        frame = json.loads(line)
                    except ValueError:
                        self.malformed += 1
                        continue
                    if isinstance(frame, dict):
                        self.frames.put(frame)
                    else:
                        self.malformed += 1
        except OSError:
            pass
        self.frames.put(None)  # EOF

    def send(self, obj: Mapping[str, Any]) -> None:
        self.sock.sendall(dumps(obj).encode() + b"\n")

    def next(self, timeout_s: float) -> dict[str, Any] | None:
        """The next frame; None at EOF. Raises ``queue.Empty`` when none came in time."""
        return self.frames.get(timeout=timeout_s)


class Drive:
    """One resident session, command by command; events become the stdout stream."""

    def __init__(self, state: Mapping[str, Any], out: IO[str], stop: threading.Event) -> None:
        self.state = state
        self.out = out
        self.stop = stop
        self.client_id = f"swarm-harness-resident:{uuid.uuid4()}"
        self.record: dict[str, Any] = {
            "drive": "resident",
            "barrier": bool(state.get("barrier", True)),
            "daemon": None,
            "session": None,
            "commands": [],
            "events": 0,
            "last_sequence": None,
            "resyncs": [],
            "children": [],
            "daemon_closing": False,
            "session_closed": None,
            "malformed_frames": 0,
            "supervisor_exit": None,
            "outcome": None,
            "detail": "",
        }
        self.conn: Connection | None = None
        self.active_id: str | None = None
        self.header_written = False
        self.held: list[dict[str, Any]] = []  # events before the header line
        self.eof = False
        self.started = time.monotonic()
        self._ids = 0

    # --- the wire ----------------------------------------------------------------------

    def _elapsed(self) -> float:
        return round(time.monotonic() - self.started, 3)

    def handle(self, frame: dict[str, Any]) -> None:
        """An unsolicited frame: a session event goes to stdout, the rest is recorded."""
        kind = frame.get("type")
        if kind == "session_event" and frame.get("activeSessionId") == self.active_id:
            event = frame.get("event")
            if isinstance(event, dict):
                self.record["events"] += 1
                meta = _mapping(frame.get("meta"))
                if isinstance(meta.get("sequence"), int):
                    self.record["last_sequence"] = meta["sequence"]
                self._emit(event)
        elif kind == "session_resynced":
            snapshot = _mapping(frame.get("snapshot"))
            ahead = snapshot.get("lastEventSequence")
            held = self.record["last_sequence"]
            lost = isinstance(ahead, int) and (held is None or ahead > held)
            self.record["resyncs"].append({"held": held, "snapshot": ahead, "lost": lost})
        elif kind == "daemon_closing":
            self.record["daemon_closing"] = True
        elif kind == "session_closed" and frame.get("activeSessionId") == self.active_id:
            self.record["session_closed"] = frame.get("reason")

    def _emit(self, event: dict[str, Any]) -> None:
        if not self.header_written:
            self.held.append(event)
            return
        self.out.write(dumps(event) + "\n")
        self.out.flush()

    def write_header(self, header: Mapping[str, Any]) -> None:
        self.out.write(dumps(header) + "\n")
        self.header_written = True
        for event in self.held:
            self.out.write(dumps(event) + "\n")
        self.held.clear()
        self.out.flush()

    def pump(self, timeout_s: float) -> dict[str, Any] | None:
        """Handle frames for up to ``timeout_s``; the first response is returned, not handled."""
        assert self.conn is not None
        try:
            frame = self.conn.next(timeout_s)
        except queue.Empty:
            return None
        if frame is None:
            self.eof = True
            return None
        if frame.get("type") == "response":
            return frame
        self.handle(frame)
        return None

    def command(
        self,
        kind: str,
        *,
        timeout_s: float | None = COMMAND_TIMEOUT_S,
        interruptible: bool = True,
        **fields: Any,
    ) -> Any:
        """Send one command and wait for its response (handling events meanwhile); its
        ``data``. A mutating command's response is acknowledged. ``timeout_s`` None: no
        deadline but the harness's (SIGTERM)."""
        assert self.conn is not None
        self._ids += 1
        cid = f"swh_{self._ids}_{uuid.uuid4().hex[:6]}"
        entry: dict[str, Any] = {"command": kind, "sent_s": self._elapsed()}
        self.record["commands"].append(entry)
        self.conn.send(
            {
                "type": "command",
                "id": cid,
                "protocol": PROTOCOL,
                "clientId": self.client_id,
                "command": {"type": kind, "id": cid, **fields},
            }
        )
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            if interruptible and self.stop.is_set():
                raise Stopped
            if self.eof:
                raise DriveError(f"the daemon hung up before answering {kind}")
            if deadline is not None and time.monotonic() > deadline:
                raise DriveError(f"no answer to {kind} in {timeout_s:g} s")
            frame = self.pump(POLL_S)
            if frame is None or frame.get("id") != cid:
                continue
            entry["answered_s"] = self._elapsed()
            entry["success"] = frame.get("success") is True
            if not entry["success"]:
                error = str(frame.get("error") or "no reason given")
                info = frame.get("errorInfo")
                code = info.get("code") if isinstance(info, dict) else None
                entry["error"] = f"{error} ({code})" if code else error
                raise DriveError(f"{kind} failed: {entry['error']}")
            if kind not in READ_ONLY:
                self._ack(cid)
            return frame.get("data")

    def _ack(self, command_id: str) -> None:
        assert self.conn is not None
        self._ids += 1
        aid = f"swh_{self._ids}_{uuid.uuid4().hex[:6]}"
        self.conn.send(
            {
                "type": "command",
                "id": aid,
                "protocol": PROTOCOL,
                "clientId": self.client_id,
                "command": {"type": "ack_result", "commandId": command_id, "id": aid},
            }
        )

    # --- the drive ---------------------------------------------------------------------

    def session(self, env: Mapping[str, str]) -> None:
        """create, attach, header, prompt, the barrier, the children, complete."""
        st = self.state
        config = {
            "cwd": st["repo"],
            "agentDir": st["agent_home"],
            "sessionDir": st["sessions"],
            "model": st["model"],
            "executionMode": "json",
            "serializedRefine": True,
            "telemetryDisabled": True,
        }
        launch_env = {k: v for k, v in env.items() if not k.startswith("PRIME_AGENT_INTERNAL_")}
        summary = self.command(
            "create", config=config, lifecycle="client_owned", launchEnv=launch_env
        )
        if not isinstance(summary, dict) or not isinstance(summary.get("id"), str):
            raise DriveError("create answered without a session id")
        self.active_id = summary["id"]
        self.record["session"] = {
            "active_session_id": summary["id"],
            "session_id": summary.get("sessionId"),
            "session_file": summary.get("sessionFile"),
        }
        self.command(
            "attach",
            activeSessionId=self.active_id,
            clientId=self.client_id,
            supportsExtensionUi=False,
            telemetryDisabled=True,
            capabilities=list(CLIENT_CAPABILITIES),
        )
        header = self.command("get_session_header", activeSessionId=self.active_id)
        if not isinstance(header, dict) or not isinstance(header.get("header"), dict):
            raise DriveError("get_session_header answered without a header")
        self.write_header(header["header"])
        self.command(
            "prompt_and_wait", timeout_s=None, activeSessionId=self.active_id, message=st["task"]
        )
        barrier = {"waitForRlmQuiescence": True} if self.record["barrier"] else {}
        self.command(
            "wait_for_headless_completion",
            timeout_s=None,
            activeSessionId=self.active_id,
            **barrier,
        )
        roster = self.command("get_rlm_children", activeSessionId=self.active_id)
        children = roster.get("children") if isinstance(roster, dict) else None
        self.record["children"] = [
            {k: c.get(k) for k in ("id", "sessionName", "status")}
            for c in children or []
            if isinstance(c, dict)
        ]
        self.command("complete_owned_session", activeSessionId=self.active_id)

    def shutdown(self, drain_s: float) -> None:
        """``shutdown``, then whatever comes until EOF (events included), within ``drain_s``."""
        if self.conn is None or self.eof:
            return
        try:
            self.command("shutdown", timeout_s=drain_s, interruptible=False)
        except (DriveError, OSError) as exc:
            self.record["detail"] = self.record["detail"] or f"shutdown: {exc}"
        deadline = time.monotonic() + drain_s
        while not self.eof and time.monotonic() < deadline:
            self.pump(POLL_S)


def connect(
    sock_path: str,
    supervisor: subprocess.Popen[bytes],
    stop: threading.Event,
    timeout_s: float = START_TIMEOUT_S,
) -> tuple[socket.socket, dict[str, Any]]:
    """Wait for the supervisor's socket and its hello (DriveError: it never came up)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if stop.is_set():
            raise Stopped
        if supervisor.poll() is not None:
            raise DriveError(
                f"the supervisor exited with code {supervisor.returncode} before it greeted"
            )
        if time.monotonic() > deadline:
            raise DriveError(f"the supervisor did not greet on {sock_path} within {timeout_s:g} s")
        if os.path.exists(sock_path):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                conn.connect(sock_path)
                conn.settimeout(COMMAND_TIMEOUT_S)
                line = conn.makefile("rb").readline(1 << 20)
                conn.settimeout(None)
                hello = json.loads(line) if line else None
            except (OSError, ValueError):
                conn.close()
                hello = None
            if isinstance(hello, dict) and hello.get("type") == "daemon_hello":
                return conn, hello
            conn.close()
        time.sleep(POLL_S)


def start_supervisor(prefix: list[str], state: Mapping[str, Any]) -> subprocess.Popen[bytes]:
    """The supervisor, detached in its own session as the CLI starts it; its output goes to
    our stderr (the item's stderr.txt)."""
    return subprocess.Popen(
        [*prefix, "--mode", "daemon", "--daemon-socket", str(state["socket"])],
        cwd=str(state["repo"]),
        stdin=subprocess.DEVNULL,
        stdout=sys.stderr.fileno(),
        stderr=sys.stderr.fileno(),
        start_new_session=True,
    )


def run(
    prefix: list[str], state: Mapping[str, Any], out: IO[str], err: IO[str], stop: threading.Event
) -> int:
    """The whole drive; its exit code. The record is written whatever happens."""
    drive = Drive(state, out, stop)
    record = drive.record
    supervisor: subprocess.Popen[bytes] | None = None
    code = EXIT_OK
    try:
        try:
            supervisor = start_supervisor(prefix, state)
        except OSError as exc:
            raise DriveError(f"the supervisor could not start: {exc}") from None
        try:
            sock, hello = connect(str(state["socket"]), supervisor, stop)
        except DriveError as exc:
            record.update(outcome="no-daemon", detail=str(exc))
            err.write(f"prime-agent resident drive: {exc}\n")
            return EXIT_NO_DAEMON
        record["daemon"] = hello_facts(hello)
        drive.conn = Connection(sock)
        drive.conn.start()
        missing = gate(hello)
        if missing:
            detail = (
                f"the daemon ({hello.get('appVersion')}) lacks what the resident drive needs: "
                + "; ".join(missing)
                + " (the one-shot drive, --agent prime-agent, works with it)"
            )
            record.update(outcome="refused", detail=detail)
            err.write(f"prime-agent resident drive: {detail}\n")
            drive.shutdown(STOP_DRAIN_S)
            return EXIT_REFUSED
        drive.session(os.environ)
        drive.shutdown(EXIT_WAIT_S)
        record["outcome"] = "completed"
    except Stopped:
        record.update(outcome="stopped", detail="stopped by SIGTERM: shutdown sent")
        drive.shutdown(STOP_DRAIN_S)
        code = EXIT_STOPPED
    except (DriveError, OSError) as exc:
        record.update(outcome="failed", detail=str(exc))
        err.write(f"prime-agent resident drive: {exc}\n")
        drive.shutdown(STOP_DRAIN_S)
        code = EXIT_FAILED
    finally:
        if drive.conn is not None:
            drive.conn.sock.close()  # the supervisor waits for its clients to close
            record["malformed_frames"] = drive.conn.malformed
        if supervisor is not None:
            wait_s = STOP_DRAIN_S if stop.is_set() else EXIT_WAIT_S
            try:
                record["supervisor_exit"] = supervisor.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                record["supervisor_exit"] = None
        _write_record(Path(state["record"]), record)
    return code


def _write_record(path: Path, record: Mapping[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def parse_argv(argv: list[str]) -> tuple[list[str], dict[str, Any]] | None:
    """(agent prefix, state) from ``PREFIX... -- STATE_JSON``; None when malformed."""
    if "--" not in argv:
        return None
    cut = len(argv) - 1 - argv[::-1].index("--")
    prefix, rest = argv[:cut], argv[cut + 1 :]
    if not prefix or len(rest) != 1:
        return None
    try:
        state = json.loads(Path(rest[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    needed = ("socket", "repo", "agent_home", "sessions", "model", "task", "record")
    if not isinstance(state, dict) or any(not isinstance(state.get(k), str) for k in needed):
        return None
    return prefix, state


def main(argv: list[str] | None = None, install_signal: Callable[..., Any] = signal.signal) -> int:
    parsed = parse_argv(sys.argv[1:] if argv is None else argv)
    if parsed is None:
        print("usage: resident.py AGENT_PREFIX... -- STATE_JSON", file=sys.stderr)
        return EXIT_USAGE
    stop = threading.Event()
    install_signal(signal.SIGTERM, lambda *_: stop.set())
    # The stream is UTF-8 whatever the locale (the CLI's is).
    with open(sys.stdout.fileno(), "w", encoding="utf-8", closefd=False) as out:
        return run(parsed[0], parsed[1], out, sys.stderr, stop)


if __name__ == "__main__":
    sys.exit(main())

"""The resident supervisor: ``agent.py --mode daemon --daemon-socket SOCK``, in the foreground.

It speaks the subset of the daemon protocol (version 7) a resident drive uses, as the real
0.8.0 supervisor does on the captured frames (``real-runs/resident-daemon``): the hello,
``create`` (a client-owned session in a detached worker, ``worker.py``), ``attach``,
``get_session_header``, ``prompt_and_wait``, ``wait_for_headless_completion`` (with or
without ``waitForRlmQuiescence``), ``get_rlm_children``, ``complete_owned_session``,
``shutdown`` and ``ack_result``. A worker's events reach the clients attached to its session
as ``session_event`` frames; ``meta.sequence`` skips a number after each
``tool_execution_start``, as the product's did (numbers it withheld from a client without
extension UI). ``old-daemon`` in the oracle makes the hello an older daemon's.

One thread per client and one per session's worker; a response is sent by whichever thread
sees what it waits for (a wait is answered by the worker's reader), so no thread ever
blocks on another's condition. Unlike ``daemon.py`` it uses :mod:`threading`: it starts
once per drive, not on every CLI run.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
from typing import TYPE_CHECKING

from sim_agent import config, jsonio, launch, records, snapshots
from sim_agent.daemon import PROTOCOL, error_response, hello_frame

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator
    from typing import Any

SCHEMA_REVISION = 22
#: ``old-daemon``: a revision before the barrier (18) that still lists the children (17).
OLD_SCHEMA_REVISION = 17
BARRIER = "rlm_quiescence_barrier"
#: The 0.8.0 daemon's capabilities, in its order.
CAPABILITIES = (
    *("attach_snapshot", "event_sequence", "extension_ui", "slim_attach", "chunked_snapshot"),
    *("client_owned_sessions", "delete_rlm_subagent", "heartbeat_catalog"),
    *("heartbeat_management", "model_catalog", "side_question_transcript", "transient_bash"),
    *("session_input_admission", "prompt_admission_cancellation", "owned_prompt_cancellation"),
    *("queue_message_mutation", "authoritative_child_roster", "owned_session_recovery_context"),
    *(BARRIER, "session_input_pause", "acp_mcp_servers"),
)
#: The headless-completion status ``wait_for_headless_completion`` answers with: autonomous
#: gates off, the product's defaults (captured).
HEADLESS_STATUS = {
    "enabled": False,
    "continuationsUsed": 0,
    "turnsUsed": 0,
    "tokensUsed": 0,
    "limits": {"maxContinuations": 3, "maxTurns": 12, "maxTokens": 80000, "timeoutMs": 1800000},
    "gates": {"commands": [], "maxRetries": 3, "timeoutMs": 300000},
    "gateAttempts": {},
}
#: A stopped worker streams its last events and exits within milliseconds; past this it,
#: and whatever is left in its process group, is killed.
WORKER_GRACE_S = 3.0
#: After SIGKILL the worker's pipe closes at once; this only bounds a pathological case.
WORKER_KILL_WAIT_S = 10.0
RECV_BYTES = 65536
USAGE = "usage: agent.py --mode daemon --daemon-socket PATH"


class CommandFailed(Exception):
    """A command the supervisor refuses: a ``success: false`` response with this text."""


#: What a command handler returns when it sent its response itself, or owes none.
ANSWERED = object()
#: What a command handler returns when the response is sent later, by a worker's reader.
LATER = object()


def run_supervisor(argv: list[str]) -> int:
    """Entry of ``agent.py --mode daemon --daemon-socket PATH``."""
    opts: dict[str, str] = {}
    args = list(argv)
    while args:
        name, has_value, value = args.pop(0).partition("=")
        if name not in ("--mode", "--daemon-socket") or not (has_value or args):
            print(f"Error: {USAGE}", file=sys.stderr)
            return 1
        opts[name] = value if has_value else args.pop(0)
    if opts.get("--mode") != "daemon" or not opts.get("--daemon-socket"):
        print(f"Error: {USAGE}", file=sys.stderr)
        return 1
    return Supervisor(os.path.abspath(opts["--daemon-socket"]), _old_daemon()).serve()


def _old_daemon() -> bool:
    """Whether the oracle named in this environment, if any, asks for ``old-daemon``."""
    path = os.environ.get(config.ORACLE_VAR)
    if not path:
        return False
    try:
        with open(path, encoding="utf-8") as f:
            spec = jsonio.loads(f.read()).get("behaviours") or ""
        return bool(config.parse_behaviours(spec).old_daemon)
    except (OSError, ValueError, AttributeError, config.SimUsageError):
        return False  # the worker reports a bad oracle, on create


class Client:
    """One connection; several threads send to it, one at a time."""

    def __init__(self, conn: socket.socket, client_id: str) -> None:
        self.conn = conn
        self.id = client_id
        #: The first envelope's ``clientId`` replaces the hello's.
        self.adopted = False
        self._lock = threading.Lock()
        self._open = True

    def send(self, frame: dict[str, Any]) -> None:
        data = (jsonio.dumps(frame) + "\n").encode()
        with self._lock:
            if not self._open:
                return
            try:
                self.conn.sendall(data)
            except OSError:
                self._open = False  # gone: its thread sees EOF and cleans up

    def end(self) -> None:
        """EOF to the client; the connection stays until the client closes its end."""
        with self._lock:
            if self._open:
                self._open = False
                try:  # noqa: SIM105 (contextlib is an import a sim process can skip)
                    self.conn.shutdown(socket.SHUT_WR)
                except OSError:
                    pass


class Waiter:
    """A command whose response waits for the session (a run's end, or quiescence)."""

    def __init__(self, client: Client, command_id: Any, name: str) -> None:
        self.client = client
        self.command_id = command_id
        self.name = name

    def answer(self, error: str | None = None) -> None:
        if error is not None:
            self.client.send(error_response(self.command_id, error, self.name))
            return
        data = dict(HEADLESS_STATUS) if self.name == "wait_for_headless_completion" else None
        self.client.send(response(self.command_id, self.name, data))


class Session:
    """One session: its worker process, its event sequence, who is attached, who waits."""

    def __init__(
        self, active_id: str, pid: int, stdin: int, lines: Generator[bytes, None, None]
    ) -> None:
        self.id = active_id
        self.pid = pid
        self.stdin = stdin
        self.lines = lines
        self.generation = os.urandom(6).hex()
        self.lock = threading.Lock()
        #: Released when the worker has exited and everything it caused was sent.
        self.ended = threading.Event()
        self.owner: str | None = None
        self.summary: dict[str, Any] = {}
        self.header: dict[str, Any] = {}
        self.attached: list[Client] = []
        self.sequence = 0
        self.children: dict[str, dict[str, Any]] = {}
        self.prompted = False
        self.first_run_over = False
        self.quiescent = False
        self.after_first_run: list[Waiter] = []
        self.after_quiescence: list[Waiter] = []
        #: Why the supervisor stopped it ("killed": shutdown), None if it did not; a
        #: completed session is stopped silently.
        self.stopped: str | None = None
        self.silent = False

    def meta(self, sequence: int) -> dict[str, Any]:
        return {
            "id": f"{self.id}:{sequence}",
            "protocol": PROTOCOL,
            "activeSessionId": self.id,
            "sequence": sequence,
            "cursor": {"generation": self.generation, "sequence": sequence},
            "emittedAt": records.iso(),
        }

    def cursor(self) -> dict[str, Any]:
        return {"generation": self.generation, "sequence": self.sequence}

    def kill(self, sig: int) -> None:
        """Signal the worker's process group: the worker, its children, their kernels."""
        try:  # noqa: SIM105 (contextlib is an import a sim process can skip)
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self) -> None:
        """Wait for a signalled worker to end; kill its group if it takes too long."""
        if not self.ended.wait(WORKER_GRACE_S):
            self.kill(signal.SIGKILL)
            self.ended.wait(WORKER_KILL_WAIT_S)
        self.kill(signal.SIGKILL)  # whatever of its group outlived it (none, normally)


def response(command_id: Any, name: str, data: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": command_id, "type": "response", "command": name, "success": True}
    if data is not None:
        out["data"] = data
    return out


class Supervisor:
    def __init__(self, socket_path: str, old: bool) -> None:
        self.socket_path = socket_path
        self.old = old
        self.generation = records.uuid7()
        self.owner_token = records.uuid7()
        self.sessions: dict[str, Session] = {}
        self.clients: set[Client] = set()
        self.closing = False
        self.lock = threading.Lock()
        self._inode: int | None = None
        self.commands: dict[str, Callable[[Client, dict[str, Any]], Any]] = {
            "create": self.create,
            "attach": self.attach,
            "get_session_header": self.get_session_header,
            "prompt_and_wait": self.prompt_and_wait,
            "wait_for_headless_completion": self.wait_for_headless_completion,
            "get_rlm_children": self.get_rlm_children,
            "complete_owned_session": self.complete_owned_session,
            "shutdown": self.shutdown,
            "ack_result": lambda client, command: ANSWERED,  # the product answers nothing
        }

    # --- the socket --------------------------------------------------------------------

    def serve(self) -> int:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, lambda *_: self.exit(kill_workers=True))
        try:  # noqa: SIM105 (contextlib is an import a sim process can skip)
            os.unlink(self.socket_path)  # a stale file: the driver starts one supervisor
        except FileNotFoundError:
            pass
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.socket_path)
        server.listen(16)
        self._inode = os.stat(self.socket_path).st_ino
        while True:
            conn, _ = server.accept()
            threading.Thread(target=self._serve_client, args=(conn,), daemon=True).start()

    def hello(self, client: Client) -> dict[str, Any]:
        capabilities = [c for c in CAPABILITIES if not (self.old and c == BARRIER)]
        revision = OLD_SCHEMA_REVISION if self.old else SCHEMA_REVISION
        schema_id = f"protocol-7-schema-{revision}-sim"
        return hello_frame(
            self.socket_path, self.generation, self.owner_token, client.id, schema_id, revision,
            capabilities,
        )  # fmt: skip

    def _serve_client(self, conn: socket.socket) -> None:
        client = Client(conn, os.urandom(6).hex())
        with self.lock:
            self.clients.add(client)
        try:
            client.send(self.hello(client))
            for raw in _lines(conn):
                if raw.strip() and not self.closing:
                    self.handle(client, raw)
        except OSError:
            pass
        finally:
            with self.lock:
                self.clients.discard(client)
                for session in self.sessions.values():
                    if client in session.attached:
                        session.attached.remove(client)
                last = self.closing and not self.clients
            conn.close()
        if last:
            self.exit()

    def handle(self, client: Client, raw: bytes) -> None:
        """Answer one line of a client."""
        try:
            msg = jsonio.loads(raw)
        except ValueError as e:
            client.send(error_response(None, f"invalid JSON: {e}"))
            return
        if not isinstance(msg, dict) or msg.get("type") != "command":
            command_id = msg.get("id") if isinstance(msg, dict) else None
            client.send(error_response(command_id, 'expected a {"type":"command"} envelope'))
            return
        command_id, command = msg.get("id"), msg.get("command")
        if msg.get("protocol") != PROTOCOL:
            wanted = jsonio.dumps(PROTOCOL)
            client.send(error_response(command_id, f"protocol mismatch: expected {wanted}"))
            return
        if not isinstance(command, dict) or not isinstance(command.get("type"), str):
            client.send(error_response(command_id, "missing command.type"))
            return
        if isinstance(msg.get("clientId"), str) and not client.adopted:
            client.id, client.adopted = msg["clientId"], True
        name = command["type"]
        handler = self.commands.get(name)
        if handler is None:
            client.send(error_response(command_id, f"unknown command: {name}", name))
            return
        command = {**command, "id": command_id}
        try:
            data = handler(client, command)
        except CommandFailed as e:
            client.send(error_response(command_id, str(e), name))
            return
        if data is not ANSWERED and data is not LATER:
            client.send(response(command_id, name, data))

    # --- commands ----------------------------------------------------------------------

    def _session(self, command: dict[str, Any]) -> Session:
        session = self.sessions.get(str(command.get("activeSessionId")))
        if session is None or session.ended.is_set():
            raise CommandFailed(f"no such session: {command.get('activeSessionId')!r}")
        return session

    def create(self, client: Client, command: dict[str, Any]) -> dict[str, Any]:
        """Start the session's worker; answers once its transcript exists."""
        session_config = command.get("config")
        launch_env = command.get("launchEnv") or {}
        if not isinstance(session_config, dict) or not isinstance(session_config.get("cwd"), str):
            raise CommandFailed("config.cwd is required")
        if not os.path.isdir(session_config["cwd"]):
            raise CommandFailed(f"session cwd does not exist: {session_config['cwd']}")
        if not isinstance(launch_env, dict):
            raise CommandFailed("launchEnv must be an object")
        env = {**os.environ, **{k: str(v) for k, v in launch_env.items()}}
        env.pop(config.DEPTH_VAR, None)
        active_id = records.active_session_id()
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        try:
            argv = launch.sim_argv(launch.MODE_WORKER)
            pid = launch.spawn(argv, stdin=stdin_r, stdout=stdout_w, new_session=True, env=env)
        except OSError as e:
            os.close(stdin_w)
            os.close(stdout_r)
            raise CommandFailed(f"cannot start the session worker: {e}") from e
        finally:
            os.close(stdin_r)
            os.close(stdout_w)
        session = Session(active_id, pid, stdin_w, _fd_lines(stdout_r))
        spec = {"config": session_config, "activeSessionId": active_id}
        _write_line(stdin_w, {**spec, "socket": self.socket_path})
        ready = jsonio.loads(next(session.lines, b'{"error": "the worker exited"}'))
        if "ready" not in ready:
            session.lines.close()  # closes the worker's stdout
            os.close(stdin_w)
            launch.wait_exit_code(pid)
            raise CommandFailed(f"session worker failed: {ready.get('error')}")
        session.header = ready["ready"]["header"]
        if command.get("lifecycle") == "client_owned":
            session.owner = client.id
        session.summary = snapshots.summary(session, session_config, ready["ready"]["sessionFile"])
        with self.lock:
            self.sessions[active_id] = session
        threading.Thread(target=self._read_worker, args=(session,), daemon=True).start()
        client.send({"type": "heartbeats_changed"})
        return {**session.summary, "attachedClients": 0}

    def attach(self, client: Client, command: dict[str, Any]) -> dict[str, Any]:
        session = self._session(command)
        with session.lock:
            if client not in session.attached:
                session.attached.append(client)
            cursor = session.cursor()
            sequence = session.sequence
            children = list(session.children.values())
        summary = {**session.summary, "attachedClients": len(session.attached)}
        snapshot = {
            "activeSessionId": session.id,
            "summary": summary,
            "state": snapshots.state(session),
            "messages": [],
            "lastEventSequence": sequence,
            "lastEventCursor": cursor,
            "children": children,
        }
        capabilities = command.get("capabilities")
        return {
            "protocol": PROTOCOL,
            "activeSessionId": session.id,
            "snapshot": snapshot,
            "replay": {"status": "complete", "toSequence": sequence, "toCursor": cursor},
            "lastEventSequence": sequence,
            "lastEventCursor": cursor,
            "client": {"id": client.id, "capabilities": capabilities or []},
        }

    def get_session_header(self, client: Client, command: dict[str, Any]) -> dict[str, Any]:
        return {"header": self._session(command).header}

    def prompt_and_wait(self, client: Client, command: dict[str, Any]) -> object:
        """Answered when the first agent run ends (its ``agent_end``)."""
        session = self._session(command)
        message = command.get("message")
        if not isinstance(message, str) or not message.strip():
            raise CommandFailed("message is required")
        with session.lock:  # the reader closes stdin under it: never write to a stale fd
            if session.prompted or session.stdin < 0:
                raise CommandFailed("the simulated session takes a single prompt")
            session.prompted = True
            session.after_first_run.append(Waiter(client, command["id"], "prompt_and_wait"))
            _write_line(session.stdin, {"prompt": message})
        return LATER

    def wait_for_headless_completion(self, client: Client, command: dict[str, Any]) -> object:
        """With ``waitForRlmQuiescence``, answered once every child has settled and been heard
        and every run that caused has drained; without, once the first run is over."""
        session = self._session(command)
        waiter = Waiter(client, command["id"], "wait_for_headless_completion")
        with session.lock:
            if command.get("waitForRlmQuiescence") is True:
                if session.prompted and not session.quiescent:
                    session.after_quiescence.append(waiter)
                    return LATER
            elif session.prompted and not session.first_run_over:
                session.after_first_run.append(waiter)
                return LATER
        return dict(HEADLESS_STATUS)

    def get_rlm_children(self, client: Client, command: dict[str, Any]) -> dict[str, Any]:
        session = self._session(command)
        with session.lock:
            return {"children": list(session.children.values()), "eventSequence": session.sequence}

    def complete_owned_session(self, client: Client, command: dict[str, Any]) -> object:
        """Stop the session's worker at once, with its children; nobody hears it close."""
        session = self._session(command)
        if session.owner is None:
            raise CommandFailed(f"session {session.id} is not client-owned")
        if session.owner != client.id:
            raise CommandFailed(f"session {session.id} is owned by another client")
        with session.lock:
            session.attached = []
            session.silent = True
            session.stopped = "completed"
        session.kill(signal.SIGTERM)
        session.stop()
        with self.lock:
            self.sessions.pop(session.id, None)
        client.send({"type": "heartbeats_changed"})
        return None

    def shutdown(self, client: Client, command: dict[str, Any]) -> object:
        """Answer, say so to everyone, stop every worker (their last events, the late
        answers, ``session_closed``), then EOF to each client; exit once they closed."""
        client.send(response(command["id"], "shutdown"))
        with self.lock:
            self.closing = True
            clients = list(self.clients)
            sessions = list(self.sessions.values())
        for each in clients:
            each.send({"type": "daemon_closing", "reason": "shutdown"})
        for session in sessions:
            with session.lock:
                session.stopped = "killed"
            session.kill(signal.SIGTERM)
        for session in sessions:
            session.stop()
        for each in clients:
            each.end()
        return ANSWERED

    # --- a worker's output ----------------------------------------------------------------

    def _read_worker(self, session: Session) -> None:
        """Relay the worker's events; answer the waits they settle; at its exit, close."""
        for raw in session.lines:
            try:
                msg = jsonio.loads(raw)
            except ValueError:
                continue  # not the worker's: nothing else writes its stdout
            if "event" in msg:
                self._relay(session, msg["event"])
            elif msg.get("quiescent"):
                with session.lock:
                    session.first_run_over = session.quiescent = True
                    waiters = session.after_first_run + session.after_quiescence
                    session.after_first_run, session.after_quiescence = [], []
                for waiter in waiters:
                    waiter.answer()
        code = launch.wait_exit_code(session.pid)
        with session.lock:
            os.close(session.stdin)
            session.stdin = -1
            waiters = session.after_first_run + session.after_quiescence
            session.after_first_run, session.after_quiescence = [], []
            stopped = session.stopped
            session.sequence += 1
            closed = {
                "type": "session_closed",
                "activeSessionId": session.id,
                "reason": stopped or "worker_exited",
                "meta": session.meta(session.sequence),
            }
            targets = [] if session.silent else list(session.attached)
        # Stopped by the supervisor, a pending command completes (as the product's late
        # prompt_and_wait response did); a worker that died by itself fails it.
        error = None if stopped else f"session worker exited with code {code}"
        for waiter in waiters:
            waiter.answer(error)
        for client in targets:
            client.send(closed)
        session.ended.set()

    def _relay(self, session: Session, event: dict[str, Any]) -> None:
        kind = event.get("type")
        with session.lock:
            session.sequence += 1
            frame = {
                "type": "session_event",
                "activeSessionId": session.id,
                "event": event,
                "meta": session.meta(session.sequence),
            }
            if kind == "tool_execution_start":
                session.sequence += 1  # the number the product kept for extension UI
            if kind == "rlm_child_update":
                child = event["child"]
                status = "running" if child.get("status") in ("queued", "running") else "done"
                session.children[child["id"]] = {
                    "id": child["id"],
                    "sessionName": child.get("sessionName"),
                    "model": child.get("model"),
                    "label": child.get("sessionName"),
                    "status": status,
                    "sessionDir": child.get("sessionDir"),
                }
            waiters: list[Waiter] = []
            if kind == "agent_end" and not session.first_run_over:
                session.first_run_over = True
                waiters, session.after_first_run = session.after_first_run, []
            targets = list(session.attached)
        for client in targets:
            client.send(frame)
        for waiter in waiters:
            waiter.answer()

    # --- leaving ---------------------------------------------------------------------

    def exit(self, kill_workers: bool = False) -> None:
        """Remove our socket file and leave (on SIGTERM, killing every worker's group)."""
        if kill_workers:
            for session in list(self.sessions.values()):
                session.kill(signal.SIGKILL)
        try:
            if os.stat(self.socket_path).st_ino == self._inode:
                os.unlink(self.socket_path)
        except OSError:
            pass
        os._exit(0)


def _write_line(fd: int, obj: dict[str, Any]) -> None:
    data = memoryview((jsonio.dumps(obj) + "\n").encode())
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:
        pass  # the worker is gone; its reader reports that


def _fd_lines(fd: int) -> Generator[bytes, None, None]:
    """The lines a worker writes, until EOF (then the descriptor is closed)."""
    buf = b""
    try:
        while chunk := os.read(fd, RECV_BYTES):
            buf += chunk
            while (end := buf.find(b"\n")) >= 0:
                line, buf = buf[:end], buf[end + 1 :]
                yield line
    finally:
        os.close(fd)


def _lines(conn: socket.socket) -> Iterator[bytes]:
    """The lines a client sends, until it closes its end."""
    buf = b""
    while chunk := conn.recv(RECV_BYTES):
        buf += chunk
        while (end := buf.find(b"\n")) >= 0:
            line, buf = buf[:end], buf[end + 1 :]
            yield line

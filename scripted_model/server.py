"""The HTTP side: ``/v1/chat/completions`` (prime-agent) and ``/v1/messages`` (Claude Code,
see :mod:`scripted_model.messages_api`) with SSE streaming on a loopback port.

Standard library only (``ThreadingHTTPServer``): children of one run, and items run side by
side, call concurrently; the server keeps no conversation state, only request counters.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import scripted_model.gemini_api as gemini_api
import scripted_model.messages_api as messages_api
import scripted_model.responses_api as responses_api
from scripted_model.bill import PRICES_PER_MTOK, Bill
from scripted_model.claude_scripts import CLAUDE_SCRIPTS, ClaudeScript
from scripted_model.codex_scripts import CODEX_SCRIPTS
from scripted_model.codex_scripts import Reply as CodexReply
from scripted_model.codex_scripts import describe as codex_describe
from scripted_model.conversation import Arm, Conversation, arm_of
from scripted_model.faults import FaultPlan, FaultRule, Request, break_stream, conversation_key
from scripted_model.gemini_api import GEMINI_API
from scripted_model.gemini_edits import EditLocks
from scripted_model.gemini_scripts import GEMINI_SCRIPTS
from scripted_model.opencode_scripts import OPENCODE_SCRIPTS
from scripted_model.oracle import Oracle
from scripted_model.responses_api import RESPONSES_PATH
from scripted_model.scripts import (
    SCRIPTS,
    WRITE_MARKER,
    Action,
    ModelFailure,
    Script,
    Text,
    ToolCall,
    describe,
    next_action,
)

#: The model APIs the server plays, each with the scripts of the client that speaks it
#: (an agent adapter's ``model_api``): OpenAI chat completions (prime-agent's ``ipython``
#: tool), Anthropic Messages with Claude Code's tools (``Agent``, ``Read``, ``Write``), and
#: Anthropic Messages with opencode's (``task``, ``read``, ``write``), and OpenAI Responses
#: with Codex's (``spawn_agent``, ``wait_agent``, ``exec_command``).
OPENCODE_MESSAGES_API = "anthropic-messages:opencode"
CLAUDE_MESSAGES_API = "anthropic-messages"
COMPLETIONS_API = "openai-completions"
CODEX_RESPONSES_API = "openai-responses:codex"
SCRIPTS_BY_API: dict[str, dict[str, Any]] = {
    COMPLETIONS_API: dict(SCRIPTS),
    CLAUDE_MESSAGES_API: dict(CLAUDE_SCRIPTS),
    OPENCODE_MESSAGES_API: dict(OPENCODE_SCRIPTS),
    CODEX_RESPONSES_API: dict(CODEX_SCRIPTS),
    GEMINI_API: dict(GEMINI_SCRIPTS),
}
#: Each API as the selftest guide names it: the endpoint and the client's tools it scripts.
API_DESCRIPTIONS: dict[str, str] = {
    COMPLETIONS_API: "OpenAI chat completions (`/v1/chat/completions`), prime-agent's "
    "`ipython` tool (`await rlm(...)`, `await agent_message.send(...)`)",
    CLAUDE_MESSAGES_API: "Anthropic Messages (`/v1/messages`), Claude Code's `Agent`, "
    "`Read` and `Write` (and `Edit` on an edit fixture)",
    OPENCODE_MESSAGES_API: "Anthropic Messages (`/v1/messages`), opencode's `task`, `read`, "
    "`write` and `edit`",
    CODEX_RESPONSES_API: "OpenAI Responses (`/v1/responses`), Codex's `spawn_agent`, "
    "`wait_agent`, `exec_command` and `apply_patch` (the scripted models get it from a model "
    "catalog the selftest names, as OpenAI's models get it from Codex's own)",
    GEMINI_API: "Gemini API (`/v1beta/models/<model>:streamGenerateContent`), Gemini CLI's "
    "`invoke_agent`, `read_file`, `write_file`, `complete_task` (and `replace` on an edit "
    "fixture)",
}
#: The APIs answered on ``/v1/messages``, and their scripts.
MESSAGES_SCRIPTS: dict[str, messages_api.MessagesScripts] = {
    CLAUDE_MESSAGES_API: CLAUDE_SCRIPTS,
    OPENCODE_MESSAGES_API: OPENCODE_SCRIPTS,
}
#: The provider name the agent home's models.json declares; model selectors are
#: ``scripted/<script>``.
PROVIDER = "scripted"
COMPLETIONS_PATH = "/v1/chat/completions"
#: A rough, deterministic token estimate: about four bytes of text per token.
BYTES_PER_TOKEN = 4
#: Declared to the agent in models.json; large enough that the product never compacts.
CONTEXT_WINDOW = 200_000
MAX_TOKENS = 8192
#: Requests larger than this are refused (413): the conversations of these scripts stay
#: far below it, and a runaway client must not exhaust memory.
MAX_REQUEST_BYTES = 64 * 1024 * 1024


#: How often the serving loop checks for a shutdown request; the standard library's 0.5 s
#: made every stop (each test, each selftest) wait half a second for nothing.
SHUTDOWN_POLL_S = 0.05
#: The longest an answer waits for the children it names (``Text.wait_for_children``) to
#: make their first request: children start within seconds, even on a loaded machine.
CHILDREN_WAIT_S = 60.0
#: How often a waiting answer looks again.
CHILDREN_POLL_S = 0.05


class _Server(ThreadingHTTPServer):
    """A client that hangs up mid-answer (the agent's CLI exiting, a child torn down) is
    part of every run, not an error to print a traceback for."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            return
        super().handle_error(request, client_address)


class ScriptedModelServer:
    """Serve the scripts on ``127.0.0.1:<port>`` (0 picks a free port) in a thread."""

    def __init__(
        self,
        oracle: Oracle,
        port: int = 0,
        scripts: dict[str, Script] | None = None,
        request_log: Path | None = None,
        claude_scripts: dict[str, ClaudeScript] | None = None,
        model_api: str | None = None,
        faults: FaultPlan | None = None,
    ):
        """``model_api`` picks what ``/v1/messages`` plays: the scripts of the client that
        speaks it (:data:`MESSAGES_SCRIPTS`). None (the default): each request's client, told
        by its User-Agent (opencode's ``opencode/...``; any other: Claude Code's), so one
        server plays several agents of one run; bills and request counts are kept per API."""
        self.oracle = oracle
        self.provider = PROVIDER
        self.prices_per_mtok = dict(PRICES_PER_MTOK)
        self.request_log = request_log
        self.scripts = dict(scripts or SCRIPTS)
        self.claude_scripts = dict(claude_scripts or CLAUDE_SCRIPTS)
        self.codex_scripts = dict(CODEX_SCRIPTS)
        self.gemini_scripts = dict(GEMINI_SCRIPTS)
        self.gemini_locks = EditLocks()
        self.model_api = model_api
        self._lock = threading.Lock()
        #: (API, model, fixture, arm) -> requests answered. The arm (:func:`arm_of`) tells an
        #: item's requests from its solo twin's, which play the same model.
        self._requests: Counter[tuple[str, str, str | None, Arm]] = Counter()
        #: (API, model, caller, fixture, arm) -> what was billed for those requests.
        self._bills: dict[tuple[str, str, str, str | None, Arm], Bill] = {}
        #: (model, shard path) -> when a child about that shard first asked, and when the
        #: parent's spawn cell for those shards was served (what ``early-exit`` waits on).
        self._child_seen: dict[tuple[str, str], float] = {}
        self._spawned: dict[tuple[str, frozenset[str]], float] = {}
        #: (model, shard path) -> requests its child thread made since its spawn (Codex's
        #: ``no-wait`` ends the parent's turn only once each child recorded a response).
        self._child_requests: Counter[tuple[str, str]] = Counter()
        self.faults = faults or FaultPlan()
        #: (API, model, caller, fixture, kind, arm) -> requests failed by the fault plan (and
        #: by a script's own refusals, kind ``scripted``).
        self._faults_served: Counter[tuple[str, str, str, str | None, str, Arm]] = Counter()
        self._httpd = _Server(("127.0.0.1", port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._port = self.port
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._watcher: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called (a stalled answer gives up its silence)."""
        return self._stopping.is_set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedModelServer:
        self._serve()
        if any(rule.kind == "refused" for rule in self.faults.rules):
            self._watcher = threading.Thread(
                target=self._refuse_in_windows, name="scripted-model-refused", daemon=True
            )
            self._watcher.start()
        return self

    def _serve(self) -> None:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": SHUTDOWN_POLL_S},
            name="scripted-model",
            daemon=True,
        )
        self._thread.start()

    def _close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _refuse_in_windows(self) -> None:
        """Stop listening while a ``refused`` rule's window is open (connections are then
        refused by the kernel), and listen again on the same port when it closes."""
        listening = True
        while not self._stopping.wait(SHUTDOWN_POLL_S):
            refusing = self.faults.refusing() is not None
            if refusing and listening:
                self._close()
                listening = False
            elif not refusing and not listening:
                self._httpd = _Server(("127.0.0.1", self._port), _handler_for(self))
                self._httpd.daemon_threads = True
                self._serve()
                listening = True

    def stop(self) -> None:
        self._stopping.set()
        if self._watcher is not None:
            self._watcher.join()
        if self._thread is not None:
            self._close()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def messages_api_of(self, user_agent: str) -> str:
        """The Messages API (:data:`MESSAGES_SCRIPTS`) a request is played with: the
        server's own, else its client's, told by the User-Agent."""
        if self.model_api in MESSAGES_SCRIPTS:
            return self.model_api
        if user_agent.startswith("opencode/"):
            return OPENCODE_MESSAGES_API
        return CLAUDE_MESSAGES_API

    def messages_scripts(self, api: str) -> messages_api.MessagesScripts:
        return self.claude_scripts if api == CLAUDE_MESSAGES_API else MESSAGES_SCRIPTS[api]

    def requests_served(
        self,
        model: str | None = None,
        fixture: str | None = None,
        api: str | None = None,
        arm: Arm | None = None,
    ) -> int:
        """Requests answered, for one model id, fixture, API and/or arm (None: any).

        A request is attributed to a fixture by the shard files its conversation names; an
        internal request of the product that names none counts under no fixture.
        """
        with self._lock:
            return sum(
                n
                for (a, m, fx, r), n in self._requests.items()
                if (model is None or m == model)
                and (fixture is None or fx == fixture)
                and (api is None or a == api)
                and (arm is None or r == arm)
            )

    def bill(
        self,
        model: str,
        caller: str,
        files: list[str],
        usage: Bill,
        api: str = COMPLETIONS_API,
        arm: Arm = "swarm",
    ) -> None:
        """Book one answered request's usage (``caller``: parent, child or internal)."""
        fixture = self.oracle.fixture_of(files[0]) if files else None
        with self._lock:
            key = (api, model, caller, fixture, arm)
            self._bills[key] = self._bills.get(key, Bill()) + usage

    def billed(
        self,
        model: str | None = None,
        fixture: str | None = None,
        caller: str | None = None,
        api: str | None = None,
        arm: Arm | None = None,
    ) -> Bill:
        """What was billed for one model, fixture, caller, API and/or arm (None: any): an
        item's ``swarm`` requests, or its solo twin's (:func:`arm_of`). Requests that name
        no fixture (the client's internal calls) count under no fixture: with ``fixture``
        given they are left out."""
        with self._lock:
            found = Bill()
            for (a, m, c, fx, r), bill in self._bills.items():
                if (
                    (model is None or m == model)
                    and (fixture is None or fx == fixture)
                    and (caller is None or c == caller)
                    and (api is None or a == api)
                    and (arm is None or r == arm)
                ):
                    found = found + bill
            return found

    def record(
        self,
        model: str,
        conv: Conversation,
        body: dict[str, Any],
        action: Action,
        arm: Arm = "swarm",
    ) -> None:
        """Count a served request; with a request log, append the request and the answer."""
        now = time.monotonic()
        files = conv.shard_files()
        with self._lock:
            if conv.child_task is not None:
                for path in files:
                    self._child_seen.setdefault((model, path), now)
            elif isinstance(action, ToolCall) and action.spawns:
                self._spawned[(model, frozenset(files))] = now
                for path in files:  # children of an earlier spawn do not count
                    self._child_seen.pop((model, path), None)
        self.record_request(model, files, body, describe(action), arm=arm)

    def wait_for_children(self, model: str, paths: tuple[str, ...]) -> bool:
        """Block until a child about each of ``paths`` has asked since their spawn (at most
        :data:`CHILDREN_WAIT_S`); whether they all did."""
        deadline = time.monotonic() + CHILDREN_WAIT_S
        while True:
            with self._lock:
                spawned = self._spawned.get((model, frozenset(paths)), 0.0)
                if all(self._child_seen.get((model, p), -1.0) >= spawned for p in paths):
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(CHILDREN_POLL_S)

    def count_child_request(self, model: str, conv_files: list[str], spawned: list[str]) -> None:
        """Count a child thread's request about its shard (``conv_files``); forget the
        counts of shards whose children a parent's answer (re)spawns (``spawned``)."""
        with self._lock:
            for path in spawned:
                self._child_requests.pop((model, path), None)
            for path in conv_files:
                self._child_requests[(model, path)] += 1

    def sleep(self, seconds: float) -> None:
        """Hold an answer for ``seconds`` (less when the server stops)."""
        self._stopping.wait(seconds)

    def wait_for_child_requests(self, model: str, paths: tuple[str, ...], count: int) -> bool:
        """Block until the child about each of ``paths`` has made ``count`` requests since
        its spawn (at most :data:`CHILDREN_WAIT_S`); whether they all did."""
        deadline = time.monotonic() + CHILDREN_WAIT_S
        while True:
            with self._lock:
                if all(self._child_requests[(model, p)] >= count for p in paths):
                    return True
            if time.monotonic() >= deadline or self.stopping:
                return False
            time.sleep(CHILDREN_POLL_S)

    def record_request(
        self,
        model: str,
        files: list[str],
        body: dict[str, Any],
        answer: str,
        api: str = COMPLETIONS_API,
        arm: Arm = "swarm",
    ) -> None:
        """Count a request about ``files`` (by their fixture); log it with a request log."""
        fixture = self.oracle.fixture_of(files[0]) if files else None
        with self._lock:
            self._requests[(api, model, fixture, arm)] += 1
            if self.request_log is not None:
                entry = {"model": model, "answer": answer, "request": body}
                with self.request_log.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry) + "\n")

    def fault_for(
        self,
        api: str,
        model: str,
        caller: str,
        first_prompt: str,
        cwd: str | None,
        phase: str,
        files: list[str],
        arm: Arm = "swarm",
    ) -> FaultRule | None:
        """The fault the plan serves this request (counted), or None: answer it."""
        if not self.faults:
            return None
        key = conversation_key(api, model, first_prompt, cwd)
        request = Request(caller, key, self.faults.number(key), phase)  # type: ignore[arg-type]
        rule = self.faults.fault_for(request)
        if rule is not None:
            fixture = self.oracle.fixture_of(files[0]) if files else None
            with self._lock:
                self._faults_served[(api, model, caller, fixture, rule.kind, arm)] += 1
        return rule

    def count_failure(
        self, api: str, model: str, caller: str, files: list[str], arm: Arm = "swarm"
    ) -> None:
        """Count a script's own refusal (``ModelFailure``) as a failed request too."""
        fixture = self.oracle.fixture_of(files[0]) if files else None
        with self._lock:
            self._faults_served[(api, model, caller, fixture, "scripted", arm)] += 1

    def faults_served(
        self,
        model: str | None = None,
        fixture: str | None = None,
        api: str | None = None,
        caller: str | None = None,
        kind: str | None = None,
        arm: Arm | None = None,
    ) -> int:
        """Requests the fault plan failed, for one model, fixture, API, caller, kind and/or
        arm (None: any); with ``fixture`` given, requests that name none are left out."""
        with self._lock:
            return sum(
                n
                for (a, m, c, fx, k, r), n in self._faults_served.items()
                if (model is None or m == model)
                and (fixture is None or fx == fixture)
                and (api is None or a == api)
                and (caller is None or c == caller)
                and (kind is None or k == kind)
                and (arm is None or r == arm)
            )

    def models_json(self) -> dict[str, Any]:
        return models_json(self.base_url, sorted(self.scripts))


def models_json(base_url: str, model_ids: list[str]) -> dict[str, Any]:
    """The agent home's ``models.json`` declaring one custom OpenAI-compatible provider."""
    free = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    return {
        "providers": {
            PROVIDER: {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": "scripted-no-key",
                "compat": {
                    "supportsDeveloperRole": False,
                    "supportsReasoningEffort": False,
                    "supportsStore": False,
                },
                "models": [
                    {
                        "id": mid,
                        "name": f"Scripted {mid}",
                        "reasoning": False,
                        "input": ["text"],
                        "contextWindow": CONTEXT_WINDOW,
                        "maxTokens": MAX_TOKENS,
                        "cost": free,
                    }
                    for mid in model_ids
                ],
            }
        }
    }


def _handler_for(server: ScriptedModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: the harness's output is the table

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                data = [{"id": m, "object": "model"} for m in sorted(server.scripts)]
                self._json(200, {"object": "list", "data": data})
            else:
                self._error(404, f"no route {self.path}", "not_found")

        def do_HEAD(self) -> None:
            # Claude Code probes its base URL before the first request.
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            route = self.path.split("?", 1)[0]
            length = int(self.headers.get("content-length") or 0)
            if (
                length > MAX_REQUEST_BYTES
                or "chunked" in self.headers.get("transfer-encoding", "").lower()
            ):
                # A body this server will not read: the connection cannot carry another
                # request (its next "request line" would be the rest of this body).
                self.close_connection = True
                self._error(413, "request too large or chunked", "invalid_request_error")
                return
            # Read every body, whatever the route: one left unread on a keep-alive connection
            # is taken for the next request's line (a 414 to the client's next call; seen with
            # Claude Code under load, a subagent's request failing "API Error: 414").
            raw = self.rfile.read(length)
            if gemini_api.is_gemini_path(self.path):
                gemini_api.serve(self, server, raw)
                return
            if route not in (COMPLETIONS_PATH, messages_api.MESSAGES_PATH, RESPONSES_PATH):
                self._error(404, f"no route {self.path}", "not_found")
                return
            if route == messages_api.MESSAGES_PATH:
                self._messages(raw)
                return
            if route == RESPONSES_PATH:
                self._responses(raw)
                return
            try:
                body = json.loads(raw)
                model = str(body["model"])
            except (ValueError, KeyError, TypeError):
                self._error(
                    400, "request body is not a chat completion request", "invalid_request_error"
                )
                return
            script = server.scripts.get(model)
            if script is None:
                self._error(404, f"The model `{model}` does not exist", "model_not_found")
                return
            conv = Conversation.from_request(body)
            action = next_action(script, conv, server.oracle)
            arm = arm_of(raw)
            caller = (
                "internal"
                if not conv.has_tools
                else "child"
                if conv.child_task is not None
                else "parent"
            )
            fault = server.fault_for(
                COMPLETIONS_API,
                model,
                caller,
                conv.root_task or "",
                _system_text(body),
                _completions_phase(action),
                conv.shard_files(),
                arm,
            )
            if fault is not None:
                self._fail(fault, _completions_partial(model))
                return
            server.record(model, conv, body, action, arm)
            if isinstance(action, Text) and action.wait_for_children:
                server.wait_for_children(model, action.wait_for_children)
            if isinstance(action, ModelFailure):
                server.count_failure(COMPLETIONS_API, model, caller, conv.shard_files(), arm)
                self._error(action.status, action.message, "invalid_request_error")
                return
            self._stream(
                model,
                action,
                prompt_tokens=max(1, len(raw) // BYTES_PER_TOKEN),
                stream=bool(body.get("stream")),
                book=lambda bill: server.bill(
                    model, caller, conv.shard_files(), bill, COMPLETIONS_API, arm
                ),
            )

        def _stream(
            self,
            model: str,
            action: Action,
            prompt_tokens: int,
            stream: bool,
            book: Callable[[Bill], None],
        ) -> None:
            """Answer, booking what the answer bills before the client can read it."""
            created = int(time.time())
            rid = f"chatcmpl-scripted-{time.monotonic_ns()}"
            base = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
            }
            if isinstance(action, ToolCall):
                args = json.dumps({"code": action.code})
                call = {
                    "index": 0,
                    "id": f"call_{time.monotonic_ns()}",
                    "type": "function",
                    "function": {"name": "ipython", "arguments": args},
                }
                delta: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
                finish, out_len = "tool_calls", len(args)
            else:
                assert isinstance(action, Text)
                delta = {"role": "assistant", "content": action.text}
                finish, out_len = "stop", len(action.text)
            completion = max(1, out_len // BYTES_PER_TOKEN)
            usage = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion,
                "total_tokens": prompt_tokens + completion,
            }
            book(Bill(prompt_tokens, completion, requests=1))
            if not stream:
                message = {k: v for k, v in delta.items() if k != "index"}
                if "tool_calls" in message:
                    message["tool_calls"] = [
                        {k: v for k, v in c.items() if k != "index"} for c in message["tool_calls"]
                    ]
                self._json(
                    200,
                    {
                        **base,
                        "object": "chat.completion",
                        "usage": usage,
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    },
                )
                return
            chunks = [
                {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                {**base, "choices": [], "usage": usage},
            ]
            payload = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
            payload += b"data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _messages(self, raw: bytes) -> None:
            api = server.messages_api_of(self.headers.get("user-agent") or "")
            try:
                body = json.loads(raw)
                model, conv, action = messages_api.plan_answer(
                    body, server.messages_scripts(api), server.oracle
                )
            except ValueError:
                error = messages_api.MessagesError(400, "invalid_request_error", "not JSON")
                self._json(error.status, error.body())
                return
            except messages_api.MessagesError as error:
                self._json(error.status, error.body())
                return
            caller = (
                "internal"
                if model.startswith(messages_api.INTERNAL_MODEL_PREFIX)
                else "child"
                if conv.child_job is not None
                else "parent"
            )
            arm = arm_of(raw)
            fault = server.fault_for(
                api,
                model,
                caller,
                conv.first_user_text,
                conv.cwd,
                messages_api.phase_of(action),
                conv.shard_files(),
                arm,
            )
            if fault is not None:
                self._fail(fault, messages_api.partial_events(model))
                return
            server.record_request(
                model, conv.shard_files(), body, messages_api.describe(action), api, arm
            )
            if isinstance(action, ModelFailure):
                server.count_failure(api, model, caller, conv.shard_files(), arm)
                failure = messages_api.MessagesError(action.status, "api_error", action.message)
                self._json(failure.status, failure.body())
                return
            messages_api.sleep_for(action)
            cached = b'"cache_control"' in raw
            usage = messages_api.usage_for(action, len(raw), cached)
            server.bill(
                model,
                caller,
                conv.shard_files(),
                Bill(
                    usage["input_tokens"],
                    usage["output_tokens"],
                    usage["cache_read_input_tokens"],
                    usage["cache_creation_input_tokens"],
                    requests=1,
                ),
                api,
                arm,
            )
            if not body.get("stream"):
                self._json(200, messages_api.message_json(model, action, len(raw), cached))
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for event in messages_api.sse_events(model, action, len(raw), cached):
                self.wfile.write(event)
            self.wfile.flush()
            self.close_connection = True

        def _responses(self, raw: bytes) -> None:
            api = CODEX_RESPONSES_API
            try:
                body = json.loads(raw)
                model, conv, action = responses_api.plan_answer(
                    body, server.codex_scripts, server.oracle
                )
            except ValueError:
                self._error(400, "request body is not JSON", "invalid_request_error")
                return
            except responses_api.ResponsesError as error:
                self._json(error.status, error.body())
                return
            caller = responses_api.caller_of(conv)
            files = conv.shard_files()
            arm = arm_of(raw)
            phase = responses_api.phase_of(action)
            fault = server.fault_for(
                api, model, caller, conv.task_text, conv.cwd, phase, files, arm
            )
            if fault is not None:
                self._fail(fault, responses_api.partial_events(model))
                return
            server.record_request(model, files, body, codex_describe(action), api, arm)
            server.count_child_request(
                model, files if caller == "child" else [], responses_api.spawned_paths(action)
            )
            if isinstance(action, CodexReply) and action.wait_for_children:
                # A child's second request comes only after its first response was recorded.
                server.wait_for_child_requests(model, action.wait_for_children, 2)
            if isinstance(action, ModelFailure):
                server.count_failure(api, model, caller, files, arm)
                failure = responses_api.error_json(action.status, action.message)
                self._json(failure.status, failure.body())
                return
            items = responses_api.output_items(action)
            usage = responses_api.usage_for(items, len(raw))
            cached = usage["input_tokens_details"]["cached_tokens"]
            server.bill(
                model,
                caller,
                files,
                Bill(usage["input_tokens"] - cached, usage["output_tokens"], cached, requests=1),
                api,
                arm,
            )
            if action.delay_s:  # billed as a provider would, whether or not the client waits
                server.sleep(action.delay_s)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for event in responses_api.sse_events(model, items, usage):
                self.wfile.write(event)
            self.wfile.flush()
            self.close_connection = True

        def _json(
            self, status: int, obj: dict[str, Any], headers: Mapping[str, str] | None = None
        ) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _fail(self, rule: FaultRule, partial: bytes) -> None:
            """Serve a fault of the plan: an HTTP error, or a stream that breaks (billed
            nothing, either way)."""
            if rule.status:
                body = {
                    "type": "error",
                    "error": {"type": rule.error_type, "message": rule.message},
                }
                self._json(rule.status, body, rule.headers())
                return
            break_stream(self, rule, partial, lambda: server.stopping)

        def _error(self, status: int, message: str, kind: str) -> None:
            self._json(status, {"error": {"message": message, "type": kind, "code": kind}})

    return Handler


def _system_text(body: Mapping[str, Any]) -> str:
    """The system prompt of a chat completions request (it names the working directory):
    what tells one item's conversations from another's."""
    return "\n".join(
        str(m.get("content"))
        for m in body.get("messages") or []
        if isinstance(m, dict) and m.get("role") in ("system", "developer")
    )


def _completions_phase(action: Action) -> str:
    """``spawn`` or ``write`` when the answer is that cell, else ``any``."""
    if isinstance(action, ToolCall):
        if action.spawns:
            return "spawn"
        if action.code.startswith(WRITE_MARKER):
            return "write"
    return "any"


def _completions_partial(model: str) -> bytes:
    """The first chunk of a streamed answer: what a cut stream delivers before it breaks."""
    chunk = {
        "id": f"chatcmpl-scripted-{time.monotonic_ns()}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Work"}}],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"

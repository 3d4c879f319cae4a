"""Parse one Codex rollout (``CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``): one thread.

Codex (0.171.0) writes one rollout per thread, the root's and each child's, every line
``{"timestamp", "type", "payload"}``. What a scorer needs of it:

* ``session_meta``: the thread's ``id``, its ``parent_thread_id`` (children only), its
  ``source.subagent.thread_spawn.depth``, ``agent_path`` (second protocol: ``/root/<task
  name>``) and ``multi_agent_version``;
* ``response_item``: the model's ``function_call`` items (``spawn_agent``, ``wait_agent``,
  ``close_agent``, ``exec_command`` ..., with ``namespace`` and JSON ``arguments``), their
  ``function_call_output``, the user messages (the task, and under the first protocol each
  finished child's ``<subagent_notification>``), and under the second protocol
  ``agent_message`` items (``NEW_TASK`` brings a child its task, ``FINAL_ANSWER`` a parent a
  child's final answer);
* ``event_msg``: ``item_completed`` of a ``CollabAgentToolCall`` (first protocol: the spawn's
  ``receiver_thread_ids``) or a ``SubAgentActivity`` (second protocol: ``started`` with the
  child's ``agent_thread_id`` for the spawn's call id), and ``task_complete`` (the turn's
  ``last_agent_message``, or its ``error`` with ``codex_error_info``);
* what the thread did to files: ``event_msg`` ``item_completed`` of a ``FileChange`` (a
  patch Codex applied: ``changes`` keyed by absolute path, each ``add`` with its
  ``content``, ``delete``, or ``update`` with its ``unified_diff`` and ``move_path``; the
  item's ``id`` is the call's; ``status`` ``failed`` when it stopped part-way: the files
  before the one its output names were written) and of a ``CommandExecution`` (``command`` as argv, ``cwd``
  as a ``file://`` URI, ``status`` and ``exit_code``: ``failed`` with the code when it exited
  non-zero). A patch that did not apply
  (``apply_patch verification failed``) leaves no ``FileChange``. The calls themselves are
  ``custom_tool_call`` items (``apply_patch``, freeform: the patch is its ``input``) with a
  ``custom_tool_call_output``, and ``function_call`` items (``exec_command {cmd, workdir}``)
  with a ``function_call_output`` (``Process exited with code N``); a call no item event
  answers is read from them;
* ``token_usage_record``: one per model response, ``usage`` with ``input_tokens`` (cached
  input inside it), ``cached_input_tokens``, ``cache_write_input_tokens``,
  ``output_tokens`` (reasoning inside it) and ``reasoning_output_tokens``, and the
  ``response_id``.

Nothing here raises on any input bytes: unreadable lines are counted.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Final
from urllib.parse import unquote, urlsplit

from scorers.codex.thread import (
    Call,
    Change,
    CommandRun,
    Failure,
    Heard,
    PatchApplied,
    Thread,
    arguments_of,
    failure_of,
    response_usage,
    statuses,
    string,
    text_of,
)
from scorers.lines import MALFORMED, iter_json_lines
from scorers.records import NO_TOKENS
from scorers.writes import repo_relative

#: User messages Codex writes itself: none of them is the task.
CONTEXT_PREFIXES: Final = (
    "<environment_context>",
    "<user_instructions>",
    "<skills_instructions>",
    "# AGENTS.md instructions",
)
_NOTIFICATION: Final = re.compile(
    r"<subagent_notification>\s*(?P<body>\{.*?\})\s*</subagent_notification>", re.S
)
#: The tools whose call is a patch (its text the ``input``), and those that run a command.
PATCH_TOOLS: Final = frozenset({"apply_patch"})
SHELL_TOOLS: Final = frozenset({"exec_command", "shell", "shell_command", "local_shell"})
#: How a call's output says a patch applied, or a command ran (it exited, with any code, or
#: was still running when the call returned), when no item event tells.
_PATCH_OK: Final = re.compile(r"\A(?:Exit code: 0\b|Success\. Updated the following files)")
_COMMAND_RAN: Final = re.compile(
    r"^(?:Process exited with code -?\d+|Process running with session ID \S+)$", re.M
)
#: A patch's file headers (``*** Add File: p``, ``*** Delete File: p``, ``*** Update File:
#: p``, then optionally ``*** Move to: q``).
_PATCH_FILE: Final = re.compile(
    r"^\*\*\* (?P<kind>Add|Delete|Update) File: (?P<path>.+?)[ \t]*$"
    r"(?:\n\*\*\* Move to: (?P<to>.+?)[ \t]*$)?",
    re.M,
)
_AGENT_MESSAGE: Final = re.compile(
    r"\AMessage Type: (?P<kind>[A-Z_]+)\n(?:[^\n]*\n)*?Payload:\n(?P<payload>.*)\Z", re.S
)


@dataclass(frozen=True, slots=True)
class _PatchItem:
    """A ``FileChange`` item as recorded, its status (``completed``, ``failed``, ...) kept
    until the call's output is read."""

    call_id: str
    files: tuple[tuple[str, str, str | None, str | None], ...]
    status: str
    at: str | None


class _Reader:
    """Accumulates one rollout's lines."""

    def __init__(self) -> None:
        self.meta: dict[str, object] = {}
        self.first_at: str | None = None
        self.last_at: str | None = None
        self.user_texts: list[str] = []
        self.new_tasks: list[str] = []
        self.calls: list[Call] = []
        self.by_call: dict[str, Call] = {}
        self.outputs: dict[str, str] = {}
        self.started: dict[str, str] = {}
        self.heard: list[Heard] = []
        self.final_message: str | None = None
        self.failure: Failure | None = None
        self.failed_turns = 0
        self.aborted = False
        self.responses: set[str] = set()
        self.unnamed_responses = 0
        self.usage = NO_TOKENS
        self.malformed = 0
        #: Item events and calls that may change files, in record order; a call is
        #: read only when no item event answers it.
        self.changes: list[Change | Call | _PatchItem] = []
        self.answered: set[str] = set()

    def line(self, value: object) -> None:
        if not isinstance(value, Mapping) or not isinstance(value.get("payload"), Mapping):
            self.malformed += 1
            return
        at = string(value.get("timestamp"))
        if at is not None:
            self.first_at = self.first_at or at
            self.last_at = at
        kind, payload = value.get("type"), value["payload"]
        if kind == "session_meta" and not self.meta:
            self.meta = dict(payload)
        elif kind == "response_item":
            self.item(payload, at)
        elif kind == "event_msg":
            self.event(payload, at)
        elif kind == "token_usage_record":
            self.usage_record(payload)

    def item(self, item: Mapping[str, object], at: str | None) -> None:
        kind = item.get("type")
        if kind == "message" and item.get("role") == "user":
            text = text_of(item.get("content"), ("text",))
            if text.lstrip().startswith(CONTEXT_PREFIXES):
                return
            notifications = list(_NOTIFICATION.finditer(text))
            for match in notifications:
                self.notification(match["body"], at)
            if not notifications:
                self.user_texts.append(text)
        elif kind == "function_call":
            call = Call(
                string(item.get("call_id")) or "",
                string(item.get("name")) or "",
                string(item.get("namespace")),
                arguments_of(item.get("arguments")),
                at,
            )
            self.calls.append(call)
            self.by_call[call.call_id] = call
            if call.name in SHELL_TOOLS or call.name in PATCH_TOOLS:
                self.changes.append(call)
        elif kind == "custom_tool_call":  # a freeform tool (apply_patch): its text is the input
            call = Call(
                string(item.get("call_id")) or "",
                string(item.get("name")) or "",
                None,
                {"input": item.get("input") if isinstance(item.get("input"), str) else ""},
                at,
            )
            self.calls.append(call)
            self.by_call[call.call_id] = call
            if call.name in PATCH_TOOLS:
                self.changes.append(call)
        elif kind == "custom_tool_call_output":
            self.outputs.setdefault(
                string(item.get("call_id")) or "", text_of(item.get("output"), ("text",))
            )
        elif kind == "function_call_output":
            call_id = string(item.get("call_id")) or ""
            output = text_of(item.get("output"), ("text",))
            self.outputs.setdefault(call_id, output)
            waited = self.by_call.get(call_id)
            if waited is not None and waited.name == "wait_agent":
                self.heard += [
                    Heard(child, status, text, at, "wait")
                    for child, status, text in statuses(output)
                ]
        elif kind == "agent_message":
            found = _AGENT_MESSAGE.match(
                text_of(item.get("content"), ("text", "encrypted_content"))
            )
            if found is None:
                return
            if found["kind"] == "NEW_TASK":
                self.new_tasks.append(found["payload"])
            elif found["kind"] == "FINAL_ANSWER":
                author = string(item.get("author")) or ""
                self.heard.append(Heard(author, "completed", found["payload"], at, "agent_message"))

    def notification(self, body: str, at: str | None) -> None:
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            self.malformed += 1
            return
        status = data.get("status") if isinstance(data, Mapping) else None
        child = string(data.get("agent_path")) if isinstance(data, Mapping) else None
        if child is None or not isinstance(status, Mapping):
            self.malformed += 1
            return
        for kind, text in status.items():
            self.heard.append(
                Heard(child, str(kind), text if isinstance(text, str) else None, at, "notification")
            )

    def event(self, event: Mapping[str, object], at: str | None) -> None:
        kind = event.get("type")
        if kind == "item_completed":
            item = event.get("item")
            if not isinstance(item, Mapping):
                return
            call_id = string(item.get("id"))
            if call_id is None:
                return
            if item.get("type") == "CollabAgentToolCall" and item.get("tool") == "spawn_agent":
                receivers = item.get("receiver_thread_ids")
                if isinstance(receivers, list) and receivers and isinstance(receivers[0], str):
                    self.started.setdefault(call_id, receivers[0])
            elif item.get("type") == "SubAgentActivity" and item.get("kind") == "started":
                child = string(item.get("agent_thread_id"))
                if child is not None:
                    self.started.setdefault(call_id, child)
            elif item.get("type") == "FileChange":
                self.answered.add(call_id)
                status = string(item.get("status")) or ""
                self.changes.append(_PatchItem(call_id, _patched(item.get("changes")), status, at))
            elif item.get("type") == "CommandExecution":
                self.answered.add(call_id)
                code = item.get("exit_code")
                self.changes.append(
                    CommandRun(
                        call_id,
                        _script(item.get("command")),
                        _from_uri(string(item.get("cwd"))),
                        isinstance(code, int) and not isinstance(code, bool),
                        at,
                    )
                )
        elif kind == "task_complete":
            error = event.get("error")
            self.aborted = False
            if isinstance(error, Mapping):
                self.failure = failure_of(error, at)
                self.failed_turns += 1
                self.final_message = None
            else:
                self.failure = None
                self.final_message = string(event.get("last_agent_message"))
        elif kind == "turn_aborted":
            self.aborted = True

    def usage_record(self, record: Mapping[str, object]) -> None:
        usage = response_usage(record.get("usage"))
        if usage is None:
            self.malformed += 1
            return
        rid = string(record.get("response_id"))
        if rid is not None:
            if rid in self.responses:
                return  # a response recorded twice is billed once
            self.responses.add(rid)
        else:
            self.unnamed_responses += 1
        self.usage = self.usage + usage

    def thread(self) -> Thread:
        meta = self.meta
        source = meta.get("source")
        spawn = source.get("subagent") if isinstance(source, Mapping) else None
        spawn = spawn.get("thread_spawn") if isinstance(spawn, Mapping) else None
        depth = spawn.get("depth") if isinstance(spawn, Mapping) else None
        parent = string(meta.get("parent_thread_id"))
        if parent is None and isinstance(spawn, Mapping):
            parent = string(spawn.get("parent_thread_id"))
        return Thread(
            id=string(meta.get("id")),
            parent_id=parent,
            depth=depth if isinstance(depth, int) and not isinstance(depth, bool) else None,
            agent_path=string(meta.get("agent_path")),
            protocol=string(meta.get("multi_agent_version")),
            started_at=string(meta.get("timestamp")) or self.first_at,
            ended_at=self.last_at,
            task=next(iter(self.new_tasks or self.user_texts), None),
            prompts=(*self.user_texts, *self.new_tasks),
            calls=tuple(self.calls),
            outputs=dict(self.outputs),
            started=dict(self.started),
            heard=tuple(self.heard),
            final_message=self.final_message,
            failure=self.failure,
            failed_turns=self.failed_turns,
            aborted=self.aborted,
            responses=len(self.responses) + self.unnamed_responses,
            usage=self.usage,
            malformed=self.malformed,
            cwd=string(meta.get("cwd")),
            changes=tuple(self._changes()),
        )

    def _changes(self) -> list[Change]:
        """The item events in order, with each call no item event answers read from the
        call and its output (a failed one dropped)."""
        found: list[Change] = []
        cwd = string(self.meta.get("cwd"))
        for entry in self.changes:
            if isinstance(entry, _PatchItem):
                files = entry.files if entry.status == "completed" else ()
                if entry.status == "failed":
                    said = self.outputs.get(entry.call_id, "")
                    patch = _patch_text(self.by_call.get(entry.call_id))
                    files = _written_before(entry.files, patch, said, cwd)
                if files:
                    found.append(PatchApplied(entry.call_id, files, entry.at))
                continue
            if not isinstance(entry, Call):
                found.append(entry)
                continue
            if entry.call_id in self.answered:
                continue
            output = self.outputs.get(entry.call_id)
            if output is None:
                continue
            if entry.name in PATCH_TOOLS:
                patch = _patch_text(entry)
                files = _patch_files(patch)
                if not _PATCH_OK.search(output):
                    files = _written_before(files, patch, output, cwd)
                if files:
                    found.append(PatchApplied(entry.call_id, files, entry.at))
                continue
            command = _script(entry.arguments.get("cmd") or entry.arguments.get("command"))
            workdir = entry.arguments.get("workdir")
            found.append(
                CommandRun(
                    entry.call_id,
                    command,
                    workdir if isinstance(workdir, str) and workdir else None,
                    bool(_COMMAND_RAN.search(output)),
                    entry.at,
                )
            )
        return found


def _patched(changes: object) -> tuple[tuple[str, str, str | None, str | None], ...]:
    """A ``FileChange`` item's files: (path, kind, added content, moved to)."""
    if not isinstance(changes, Mapping):
        return ()
    files = []
    for path, change in changes.items():
        if not isinstance(path, str) or not path or not isinstance(change, Mapping):
            continue
        kind = string(change.get("type")) or "update"
        content = change.get("content") if kind == "add" else None
        files.append(
            (
                path,
                kind,
                content if isinstance(content, str) else None,
                string(change.get("move_path")),
            )
        )
    return tuple(files)


def _patch_files(patch: str) -> tuple[tuple[str, str, str | None, str | None], ...]:
    """The files a patch's text names (what a call says when no item event does)."""
    return tuple((m["path"], m["kind"].lower(), None, m["to"]) for m in _PATCH_FILE.finditer(patch))


def _patch_text(call: Call | None) -> str:
    """The patch a call sent: ``apply_patch``'s input, or a shell command's text (Codex
    applies ``apply_patch <<'EOF'`` itself)."""
    if call is None:
        return ""
    text = call.arguments.get("input") or call.arguments.get("cmd")
    return text if isinstance(text, str) else ""


def _written_before(
    files: tuple[tuple[str, str, str | None, str | None], ...],
    patch: str,
    output: str,
    cwd: str | None,
) -> tuple[tuple[str, str, str | None, str | None], ...]:
    """What a patch that failed part-way still wrote. Codex applies a patch file by file,
    in the patch's order, and stops at the first file it cannot change (another thread
    changed it since the patch was checked), naming that file in its output: the files
    before it were written. A failure that names none of the patch's files (it was refused
    before anything applied) wrote nothing."""
    order = [m["path"] for m in _PATCH_FILE.finditer(patch)]
    failed = next(
        (
            n
            for n, path in enumerate(order)
            if path in output or (cwd and posixpath.join(cwd, path) in output)
        ),
        None,
    )
    if failed is None:
        return ()
    written = {repo_relative(p, cwd) for p in order[:failed]}
    return tuple(f for f in files if repo_relative(f[0], cwd) in written)


def _script(command: object) -> str:
    """A command's script: the text a shell runs (``bash -lc <script>`` as Codex records
    it), else the argv joined."""
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not all(isinstance(w, str) for w in command):
        return ""
    if len(command) == 3 and command[1] in ("-c", "-lc"):
        return str(command[2])
    return shlex.join(command)


def _from_uri(cwd: str | None) -> str | None:
    """A ``file://`` URI as a path (Codex records a command's cwd so)."""
    if cwd is None or not cwd.startswith("file://"):
        return cwd
    return unquote(urlsplit(cwd).path) or None


def parse_rollout(stream: IO[bytes]) -> Thread:
    """Read one whole rollout; never raises on any input bytes."""
    reader = _Reader()
    for value, _terminated in iter_json_lines(stream):
        if value is MALFORMED:
            reader.malformed += 1
            continue
        reader.line(value)
    return reader.thread()


__all__ = ["Call", "Failure", "Heard", "Thread", "parse_rollout", "response_usage"]

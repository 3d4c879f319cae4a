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
* what the thread did to files (``FileChange`` and ``CommandExecution`` items, the patch
  and command calls): read as :mod:`scorers.codex.patches` says;
* ``token_usage_record``: one per model response, ``usage`` with ``input_tokens`` (cached
  input inside it), ``cached_input_tokens``, ``cache_write_input_tokens``,
  ``output_tokens`` (reasoning inside it) and ``reasoning_output_tokens``, and the
  ``response_id``.

Nothing here raises on any input bytes: unreadable lines are counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import IO, Final

import scorers.codex.patches as patches
from scorers.codex.patches import PATCH_TOOLS, SHELL_TOOLS, PatchItem
from scorers.codex.thread import (
    Call,
    Change,
    CommandRun,
    Failure,
    Heard,
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
_AGENT_MESSAGE: Final = re.compile(
    r"\AMessage Type: (?P<kind>[A-Z_]+)\n(?:[^\n]*\n)*?Payload:\n(?P<payload>.*)\Z", re.S
)


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
        #: What may have changed files, in order (a call read only if no item answers it).
        self.changes: list[Change | Call | PatchItem] = []
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

    def called(self, call: Call) -> None:
        """A model's tool call; one that may change files is also a change to read."""
        self.calls.append(call)
        self.by_call[call.call_id] = call
        if call.name in SHELL_TOOLS or call.name in PATCH_TOOLS:
            self.changes.append(call)

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
            self.called(call)
        elif kind == "custom_tool_call":  # a freeform tool (apply_patch): its text is the input
            call = Call(
                string(item.get("call_id")) or "",
                string(item.get("name")) or "",
                None,
                {"input": item.get("input") if isinstance(item.get("input"), str) else ""},
                at,
            )
            self.called(call)
        elif kind in ("custom_tool_call_output", "function_call_output"):
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
                self.changes.append(
                    PatchItem(call_id, patches.patched_files(item.get("changes")), status, at)
                )
            elif item.get("type") == "CommandExecution":
                self.answered.add(call_id)
                code = item.get("exit_code")
                self.changes.append(
                    CommandRun(
                        call_id,
                        patches.script_of(item.get("command")),
                        patches.path_of_uri(string(item.get("cwd"))),
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
            changes=tuple(
                patches.reconcile(
                    self.changes, self.outputs, self.by_call, self.answered, string(meta.get("cwd"))
                )
            ),
        )


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

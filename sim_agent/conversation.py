"""The parent's conversation, written twice: to its transcript and to the stdout event stream.

Mirrors ``--mode json`` of the real CLI (CONTRACT §4): stdout line 1 is the session header,
then ``agent_start``, ``turn_start``, ``message_start``/``message_update``/``message_end``,
``tool_execution_*``, ``rlm_child_update``, ``turn_end`` (repeating the assistant message)
and ``agent_end``, one compact JSON object per line, flushed per line. A resident session
(``worker.py``) streams the same events over its supervisor's socket instead, runs again
(:meth:`Conversation.resume`) when a child's reply arrives late, and on a stop streams what
a run cut short ends with (:meth:`Conversation.abort`).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

from sim_agent import records

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, BinaryIO

    from .edits import Cell


#: What a tool cell cut short by a stop reports.
ABORTED = "Request was aborted"


class EventStream:
    """Stdout in ``--mode json``; a reader that went away is not the agent's problem."""

    def __init__(self, out: BinaryIO | None = None) -> None:
        self._out = out if out is not None else sys.stdout.buffer
        self._open = True

    def header(self, header: dict[str, Any]) -> None:
        """The session header: stdout's first line."""
        self.emit(header)

    def emit(self, event: dict[str, Any]) -> None:
        if not self._open:
            return
        try:
            self._out.write((records.dumps(event) + "\n").encode())
            self._out.flush()
        except (BrokenPipeError, ValueError):
            self._open = False
            # Point fd 1 at /dev/null so the interpreter's final flush cannot fail too.
            try:
                fd = os.open(os.devnull, os.O_WRONLY)
                os.dup2(fd, 1)
                os.close(fd)
            except OSError:
                pass


class Conversation:
    """Turns and messages of one session, mirrored to its transcript and to the stream."""

    def __init__(
        self, transcript: records.SessionFile, model: tuple[str, str], stream: EventStream
    ) -> None:
        self.transcript = transcript
        self.model = model
        self.stream = stream
        self.messages: list[dict[str, Any]] = []
        self._in_turn = False
        self._in_run = False
        self._turn_message: dict[str, Any] | None = None
        self._calls = 0
        #: The tool call whose cell is running, if one is.
        self._open_call: str | None = None

    def start(self, task: str) -> None:
        self.stream.header(self.transcript.header)
        self.transcript.preamble(self.model)
        self.transcript.append("session_state", state={"status": "active"})
        self.resume()
        message = {
            "role": "user",
            "content": [records.text_block(task)],
            "timestamp": records.now_ms(),
        }
        self._record("message", message, message=message)

    def resume(self) -> None:
        """Start an agent run: the first one, or one a late child reply woke."""
        self.stream.emit({"type": "agent_start"})
        self._in_run = True

    def end_run(self) -> None:
        self.stream.emit({"type": "agent_end", "messages": self.messages})
        self._in_run = False

    def abort(self) -> None:
        """What a run stopped mid-way streams, as the product's did: the running cell ends
        "Request was aborted", then the turn and the run end."""
        if self._open_call is not None:
            result = {
                "role": "toolResult",
                "toolCallId": self._open_call,
                "toolName": "ipython",
                "content": [records.text_block(ABORTED)],
                "details": {},
                "isError": True,
                "timestamp": records.now_ms(),
            }
            outcome = {"content": result["content"], "details": {}}
            self.stream.emit(
                {
                    "type": "tool_execution_end",
                    "toolCallId": self._open_call,
                    "toolName": "ipython",
                    "result": outcome,
                    "isError": True,
                }
            )
            self._open_call = None
            self._record("message", result, message=result)
            self.end_turn([result])
        elif self._in_turn:
            self.end_turn([])
        if self._in_run:
            self.end_run()

    def _begin_turn(self) -> None:
        if not self._in_turn:
            self.stream.emit({"type": "turn_start"})
            self._in_turn = True

    def end_turn(self, tool_results: list[dict[str, Any]]) -> None:
        self.stream.emit(
            {"type": "turn_end", "message": self._turn_message, "toolResults": tool_results}
        )
        self._in_turn = False

    def _record(self, entry_type: str, payload: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """Stream ``payload`` as a message and write it to the transcript as ``fields``."""
        self._begin_turn()
        self.stream.emit({"type": "message_start", "message": payload})
        self.stream.emit({"type": "message_end", "message": payload})
        self.messages.append(payload)
        return self.transcript.append(entry_type, **fields)

    def assistant(
        self,
        content: list[dict[str, Any]],
        stop_reason: str,
        usage: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> dict[str, Any]:
        """Stream and record one assistant message; returns its transcript entry."""
        self._begin_turn()
        message = records.assistant_message(
            content, self.model, stop_reason, usage, error_message=error
        )
        # Like the real stream: an empty, zero-usage message_start, then the full message.
        opening = {**message, "content": [], "usage": records.usage(0, 0), "stopReason": "stop"}
        opening.pop("errorMessage", None)
        self.stream.emit({"type": "message_start", "message": opening})
        if content:
            event = {
                "type": "text_end" if content[0]["type"] == "text" else "toolcall_end",
                "contentIndex": 0,
            }
            self.stream.emit(
                {"type": "message_update", "message": message, "assistantMessageEvent": event}
            )
        self.stream.emit({"type": "message_end", "message": message})
        self.messages.append(message)
        self._turn_message = message
        return self.transcript.append("message", message=message)

    def tool_turn(self, code: str, run: Callable[[dict[str, Any]], str | Cell]) -> str:
        """One assistant tool call and its execution; ``run`` gets the call's transcript entry
        and returns what the cell printed, or the :class:`~sim_agent.edits.Cell` it ran."""
        self._calls += 1
        call_id = f"call_{self._calls}"
        entry = self.assistant([records.tool_call(call_id, code)], "toolUse")
        args = {"code": code}
        self.stream.emit(
            {
                "type": "tool_execution_start",
                "toolCallId": call_id,
                "toolName": "ipython",
                "args": args,
            }
        )
        started = time.monotonic()
        self._open_call = call_id
        out = run(entry)
        self._open_call = None
        took = int((time.monotonic() - started) * 1000)
        if isinstance(out, str):
            text = out
            result = records.tool_result(call_id, text, took)
        else:
            text = out.stdout
            result = records.tool_result(
                call_id, text, took, diffs=out.diffs, error=out.error, stderr=out.stderr
            )
        failed = result["isError"]
        outcome = {"content": result["content"], "details": result["details"], "isError": failed}
        self.stream.emit(
            {
                "type": "tool_execution_end",
                "toolCallId": call_id,
                "toolName": "ipython",
                "result": outcome,
                "isError": failed,
            }
        )
        self._record("message", result, message=result)
        self.end_turn([result])
        return text

    def custom(
        self, custom_type: str, content: str, details: dict[str, Any], at: str | None = None
    ) -> None:
        """Deliver a custom message (dated ``at`` in the transcript, default now)."""
        message = {
            "role": "custom",
            "customType": custom_type,
            "content": content,
            "display": True,
            "details": details,
            "timestamp": records.now_ms(),
        }
        self._record(
            "custom_message",
            message,
            customType=custom_type,
            content=content,
            display=True,
            details=details,
            at=at,
        )

    def event(self, event: dict[str, Any]) -> None:
        self.stream.emit(event)

    def finish(self, text: str) -> None:
        self.assistant([records.text_block(text)], "stop")
        self.end_turn([])
        self.end_run()

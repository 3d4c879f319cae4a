"""What an ``invoke_agent`` call started and what its caller heard back.

Gemini CLI (0.61.0) starts a subagent through one tool, ``invoke_agent{agent_name, prompt,
wait_for_previous?}``. The call's record names the subagent it started (``agentId``, the
stem of its ``<parent session id>/<agentId>.jsonl`` record; none when it started none) and
its function response ``output`` is what the parent was told:

* ``Subagent '<name>' finished.\\nTermination Reason: GOAL\\nResult:\\n<result>``: the
  subagent ended by calling ``complete_task``; ``<result>`` is its result (a reply);
* ``... finished.\\nTermination Reason: <other>\\nResult:\\n<text>`` (``ERROR_NO_COMPLETE_TASK_CALL``
  when it ended in plain text twice, ``MAX_TURNS``, ``TIMEOUT``, ``ABORTED`` ...): it ended
  without completing; ``<text>`` is the client's, not the subagent's (a failure);
* ``Subagent '<name>' failed. Error: <error>``: its model calls failed (a failure);
* ``Subagent '<name>' not found.`` (as the response's ``error``, the call's status
  ``error``, no ``agentId``): nothing was started.

The worker a call is for is the prompt's ``Worker: <name>`` line: the harness's one
worker agent definition serves every shard, so the name travels in the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal, NamedTuple

from scorers.gemini.chat import ToolCall, string

#: The tool that starts a subagent, and the one a subagent ends with.
INVOKE_TOOL: Final = "invoke_agent"
COMPLETE_TOOL: Final = "complete_task"
#: The termination reason of a subagent that completed its task.
GOAL: Final = "GOAL"
#: How the worker name travels in the prompt (markdown emphasis around the label is
#: tolerated, the name itself is not altered), as for Codex.
WORKER_LINE: Final = re.compile(r"^[\W_]*worker[\W_]*:[*_\s]*(?P<name>[\w.-]+)", re.I | re.M)
_FINISHED: Final = re.compile(
    r"\ASubagent '(?P<name>[^'\n]*)' finished\.\s*\nTermination Reason: (?P<reason>\S+)"
    r"(?:\s*\nResult:\n(?P<result>.*))?\Z",
    re.S,
)
_FAILED: Final = re.compile(
    r"\ASubagent '(?P<name>[^'\n]*)' failed\.\s*(?:Error:\s*)?(?P<error>.*)\Z", re.S
)
_NOT_FOUND: Final = re.compile(r"\ASubagent '(?P<name>[^'\n]*)' not found\.?\s*\Z")

#: ``finished``: ended with ``complete_task`` (a reply). ``stopped``: ended another way
#: (a termination reason other than GOAL). ``failed``: its model calls failed.
#: ``not_found``: no such agent, nothing started. ``unknown``: an answer of no known form.
#: ``pending``: no answer recorded (the run ended first).
Outcome = Literal["finished", "stopped", "failed", "not_found", "unknown", "pending"]


class Heard(NamedTuple):
    """What the caller of one ``invoke_agent`` call was told: the outcome, the termination
    reason (``GOAL``, ``ERROR_NO_COMPLETE_TASK_CALL`` ...; for a failure ``failed``, for
    an unknown agent ``not found``), the subagent's result (the text after ``Result:``,
    only when it finished) and the words of the answer as given."""

    outcome: Outcome
    reason: str
    result: str | None
    text: str


def heard(call: ToolCall) -> Heard:
    """What ``call``'s function response told the parent."""
    text = call.output if call.output is not None else call.error
    if text is None:
        return Heard("pending", "", None, "")
    text = text.strip("\n")
    if found := _FINISHED.match(text):
        reason, result = found["reason"], found["result"]
        if reason == GOAL:
            return Heard("finished", reason, result if result is not None else "", text)
        return Heard("stopped", reason, None, text)
    if found := _FAILED.match(text):
        return Heard("failed", "failed", None, text)
    if _NOT_FOUND.match(text):
        return Heard("not_found", "not found", None, text)
    return Heard("unknown", call.status or "", None, text)


def failure_error(text: str) -> str:
    """The error of a ``failed. Error: ...`` answer (the whole text when it is not one)."""
    found = _FAILED.match(text)
    return found["error"].strip() if found and found["error"].strip() else text


def worker_of(call: ToolCall, workers: Sequence[str]) -> str:
    """The worker a call is for: its prompt's ``Worker:`` line (exactly one of ``workers``
    when the name differs from it only in case), else the ``agent_name`` it asked for."""
    prompt = call.args.get("prompt")
    found = WORKER_LINE.search(prompt) if isinstance(prompt, str) else None
    if found:
        name = found["name"]
        same = [w for w in workers if w.lower() == name.lower()]
        return same[0] if len(same) == 1 else name
    return string(call.args.get("agent_name")) or ""


def completed_result(calls: Sequence[ToolCall]) -> str | None:
    """The result of a subagent's last ``complete_task`` call that was accepted (its
    ``result`` argument; a structured result as its ``response`` text), or None."""
    for call in reversed(calls):
        if call.name != COMPLETE_TOOL or call.status not in (None, "success"):
            continue
        result = call.args.get("result")
        if isinstance(result, dict):
            result = result.get("response")
        if isinstance(result, str):
            return result
    return None


__all__ = [
    "COMPLETE_TOOL",
    "GOAL",
    "INVOKE_TOOL",
    "WORKER_LINE",
    "Heard",
    "Outcome",
    "completed_result",
    "failure_error",
    "heard",
    "worker_of",
]

"""Spawns: the ``task`` tool parts of a session, and what the caller received from each.

A spawn is a ``tool`` part with ``tool`` = ``task`` in the calling session (one per call,
``callID`` = the model's tool-use id). ``state.input`` holds ``description`` (the name the
rubric knows the child by), ``prompt`` and ``subagent_type``; ``state.metadata.sessionId``
names the child session, on completed and failed calls alike. ``state.status`` is
``completed`` (``state.output`` is byte for byte the tool result the caller's next model
call carried) or ``error`` (``state.error``, sent to the model as an error result);
``pending`` / ``running`` mean the run ended before the child did.

A completed output is a frame, ``<task id="<child>" state="completed">`` around
``<task_result>`` and the child's final text. Only a frame whose state is ``completed`` is
a reply: a background task's immediate answer (state ``running``) is not one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from scorers.opencode.store import PartRow

#: The tool that spawns a subagent.
SPAWN_TOOL: Final = "task"
_FRAME: Final = re.compile(
    r'<task id="(?P<id>[^"]*)" state="(?P<state>[^"]*)">\n'
    r"(?:<summary>.*?</summary>\n)?"
    r"<task_result>\n(?P<body>.*)\n</task_result>\n</task>",
    re.S,
)


@dataclass(frozen=True, slots=True)
class Frame:
    """A completed task output, taken apart: the child it names, its state, the text."""

    child_id: str
    state: str
    body: str


@dataclass(frozen=True, slots=True)
class Spawn:
    """One ``task`` call. Times are epoch milliseconds: ``created`` when the call's part
    was stored (before its child session existed), ``ended`` when the call finished."""

    call_id: str
    caller: str
    description: str
    prompt: str
    child_id: str | None
    status: str
    output: str | None
    error: str | None
    created: int
    ended: int | None

    @property
    def frame(self) -> Frame | None:
        return parse_frame(self.output) if self.status == "completed" else None


def parse_frame(output: str | None) -> Frame | None:
    """The frame of a completed task output, or ``None`` when ``output`` is not one."""
    if output is None:
        return None
    match = _FRAME.fullmatch(output)
    if match is None:
        return None
    return Frame(match["id"], match["state"], match["body"])


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _map(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def spawn_of(part: PartRow) -> Spawn | None:
    """The spawn ``part`` records, or ``None`` when it is not a ``task`` call."""
    data = part.data
    if data.get("type") != "tool" or data.get("tool") != SPAWN_TOOL:
        return None
    state = _map(data.get("state"))
    spawn_input = _map(state.get("input"))
    metadata = _map(state.get("metadata"))
    times = _map(state.get("time"))
    end = times.get("end")
    output = _str(state.get("output"))
    child = _str(metadata.get("sessionId")) or None
    if child is None and output is not None:
        frame = parse_frame(output)
        child = frame.child_id if frame is not None and frame.child_id else None
    return Spawn(
        call_id=_str(data.get("callID")) or part.id,
        caller=part.session_id,
        description=_str(spawn_input.get("description")) or "",
        prompt=_str(spawn_input.get("prompt")) or "",
        child_id=child,
        status=_str(state.get("status")) or "",
        output=output,
        error=_str(state.get("error")),
        created=part.created,
        ended=end if isinstance(end, int) and not isinstance(end, bool) else None,
    )


def find_spawns(parts: Iterable[PartRow]) -> list[Spawn]:
    """Every ``task`` call among ``parts``, in the order given (creation order)."""
    return [spawn for part in parts if (spawn := spawn_of(part)) is not None]
